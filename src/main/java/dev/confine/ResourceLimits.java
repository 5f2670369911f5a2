package dev.confine;

/**
 * How much the child's whole process tree may consume. Zero means "no cap" for every field except
 * {@code maxOutputBytes}, where it means "the runner's default".
 *
 * @param cpuMillicores a CPU-time budget for the whole tree, in thousandths of a core over the
 *     call's timeout: budget = timeout x millicores / 1000; requires a timeout
 * @param memoryBytes a cap on the tree's memory
 * @param diskBytes a disk quota; no backend supports one, so any non-zero value is NOT_AVAILABLE
 * @param maxOutputBytes the capture cap per output stream of an exec, or the size of a session's
 *     replay log (0 = the runner's default, 10 MiB for the built-in runners). An exec keeps its
 *     output on the heap, so the built-in runners refuse with VALIDATION, before anything runs, a
 *     cap above what the JVM can capture per stream: the largest Java array (2^31 - 9 bytes) or an
 *     eighth of the maximum heap ({@code Runtime.maxMemory()}), whichever is smaller. An exec holds
 *     at most its two streams' caps while it runs, and four for a moment while its result is made
 *     (one large result at a time in a JVM), so one exec at the limit stays within half the heap. A
 *     runner's own default that nobody chose (the built-in 10 MiB, on a heap under 80 MiB, or no
 *     cap at all) is lowered to the limit instead, its truncation flags saying when output went
 *     past it. The execs running in a JVM share a capture budget of a quarter of its heap: an exec
 *     that finds it spent stops keeping output and fails with NOT_AVAILABLE carrying what it kept
 * @param maxProcesses a cap on processes and threads of the whole tree
 */
public record ResourceLimits(
    int cpuMillicores, long memoryBytes, long diskBytes, long maxOutputBytes, int maxProcesses) {

  /** No caps, the runner's default output cap. */
  public static final ResourceLimits NONE = new ResourceLimits(0, 0, 0, 0, 0);

  /**
   * Checks that no value is negative.
   *
   * @throws SandboxException VALIDATION naming the negative field
   */
  public ResourceLimits {
    requireNonNegative("cpuMillicores", cpuMillicores);
    requireNonNegative("memoryBytes", memoryBytes);
    requireNonNegative("diskBytes", diskBytes);
    requireNonNegative("maxOutputBytes", maxOutputBytes);
    requireNonNegative("maxProcesses", maxProcesses);
  }

  private static void requireNonNegative(String field, long value) {
    if (value < 0) {
      throw new SandboxException(
          SandboxException.Kind.VALIDATION,
          "sandbox: resources." + field + " " + value + " must not be negative");
    }
  }

  /** Whether any cap that a backend must enforce (everything but the output cap) is set. */
  public boolean hasCaps() {
    return cpuMillicores != 0 || memoryBytes != 0 || diskBytes != 0 || maxProcesses != 0;
  }

  /** A builder starting from {@link #NONE}. */
  public static Builder builder() {
    return new Builder(NONE);
  }

  /** A builder starting from these limits. */
  public Builder toBuilder() {
    return new Builder(this);
  }

  /** Builds {@link ResourceLimits}. */
  public static final class Builder {
    private int cpuMillicores;
    private long memoryBytes;
    private long diskBytes;
    private long maxOutputBytes;
    private int maxProcesses;

    private Builder(ResourceLimits from) {
      cpuMillicores = from.cpuMillicores;
      memoryBytes = from.memoryBytes;
      diskBytes = from.diskBytes;
      maxOutputBytes = from.maxOutputBytes;
      maxProcesses = from.maxProcesses;
    }

    /** Sets the CPU-time budget in millicores over the timeout. */
    public Builder cpuMillicores(int cpuMillicores) {
      this.cpuMillicores = cpuMillicores;
      return this;
    }

    /** Sets the memory cap. */
    public Builder memoryBytes(long memoryBytes) {
      this.memoryBytes = memoryBytes;
      return this;
    }

    /** Sets the disk quota (no backend supports one). */
    public Builder diskBytes(long diskBytes) {
      this.diskBytes = diskBytes;
      return this;
    }

    /**
     * Sets the output cap per stream; see {@link ResourceLimits#maxOutputBytes()} for the most an
     * exec can keep.
     */
    public Builder maxOutputBytes(long maxOutputBytes) {
      this.maxOutputBytes = maxOutputBytes;
      return this;
    }

    /** Sets the cap on processes and threads. */
    public Builder maxProcesses(int maxProcesses) {
      this.maxProcesses = maxProcesses;
      return this;
    }

    /** The limits. */
    public ResourceLimits build() {
      return new ResourceLimits(
          cpuMillicores, memoryBytes, diskBytes, maxOutputBytes, maxProcesses);
    }
  }
}
