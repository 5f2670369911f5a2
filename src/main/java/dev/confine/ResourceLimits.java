package dev.confine;

/**
 * How much the child's whole process tree may consume. Zero means "no cap" for every field except
 * {@code maxOutputBytes}, where it means "the runner's default".
 *
 * @param cpuMillicores a CPU-time budget for the whole tree, in thousandths of a core over the
 *     call's timeout: budget = timeout x millicores / 1000; requires a timeout. The tree runs at
 *     full speed and is killed once it has used the budget (BUDGET_EXCEEDED); it is never throttled
 *     by this value (see {@code cpuThrottleMillicores})
 * @param memoryBytes a cap on the tree's memory; 0, or at least {@link #MIN_MEMORY_BYTES}
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
 * @param cpuThrottleMillicores throttle the whole tree to this share of one core (1000 = one core)
 *     for as long as it runs, by the kernel's CPU controller; no timeout needed, nothing is killed.
 *     Independent of the budget: a runner without a CPU controller refuses it (NOT_AVAILABLE)
 */
public record ResourceLimits(
    int cpuMillicores,
    long memoryBytes,
    long diskBytes,
    long maxOutputBytes,
    int maxProcesses,
    int cpuThrottleMillicores) {

  /** No caps, the runner's default output cap. */
  public static final ResourceLimits NONE = new ResourceLimits(0, 0, 0, 0, 0, 0);

  /**
   * The smallest memory cap, 1 MiB: a smaller non-zero cap is refused with VALIDATION. What the
   * kernel charges for a trivial program's start is a few hundred KiB (measured on Linux 6.18,
   * cgroup v1: {@code /bin/true} and {@code sh -c true} started 30 times in 30 at 192 KiB and
   * above, and were OOM-killed in most runs at 128 KiB and below; peaks up to 516 KiB under larger
   * caps), so a cap below this fails every exec instead of capping it; 1 MiB leaves a margin for a
   * colder page cache.
   */
  public static final long MIN_MEMORY_BYTES = 1L << 20;

  /** Limits without a CPU throttle (the components before it). */
  public ResourceLimits(
      int cpuMillicores, long memoryBytes, long diskBytes, long maxOutputBytes, int maxProcesses) {
    this(cpuMillicores, memoryBytes, diskBytes, maxOutputBytes, maxProcesses, 0);
  }

  /**
   * Checks that no value is negative and that a memory cap can start a program.
   *
   * @throws SandboxException VALIDATION naming the negative field, or a memory cap below {@link
   *     #MIN_MEMORY_BYTES} with that minimum
   */
  public ResourceLimits {
    requireNonNegative("cpuMillicores", cpuMillicores);
    requireNonNegative("memoryBytes", memoryBytes);
    requireNonNegative("diskBytes", diskBytes);
    requireNonNegative("maxOutputBytes", maxOutputBytes);
    requireNonNegative("maxProcesses", maxProcesses);
    requireNonNegative("cpuThrottleMillicores", cpuThrottleMillicores);
    if (memoryBytes > 0 && memoryBytes < MIN_MEMORY_BYTES) {
      throw SandboxException.of(
          SandboxException.Kind.VALIDATION,
          "resources.memoryBytes "
              + memoryBytes
              + " is below the smallest memory cap, "
              + MIN_MEMORY_BYTES
              + " bytes (1 MiB): no program starts in less");
    }
  }

  private static void requireNonNegative(String field, long value) {
    if (value < 0) {
      throw SandboxException.of(
          SandboxException.Kind.VALIDATION,
          "resources." + field + " " + value + " must not be negative");
    }
  }

  /** Whether any cap that a backend must enforce (everything but the output cap) is set. */
  public boolean hasCaps() {
    return cpuMillicores != 0
        || memoryBytes != 0
        || diskBytes != 0
        || maxProcesses != 0
        || cpuThrottleMillicores != 0;
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
    private int cpuThrottleMillicores;

    private Builder(ResourceLimits from) {
      cpuMillicores = from.cpuMillicores;
      memoryBytes = from.memoryBytes;
      diskBytes = from.diskBytes;
      maxOutputBytes = from.maxOutputBytes;
      maxProcesses = from.maxProcesses;
      cpuThrottleMillicores = from.cpuThrottleMillicores;
    }

    /**
     * Sets the CPU-time budget in millicores over the timeout: the tree is killed once it has used
     * timeout x millicores / 1000 of CPU time; it is not throttled.
     */
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

    /** Sets the CPU throttle in millicores (a share of one core, held by the kernel). */
    public Builder cpuThrottleMillicores(int cpuThrottleMillicores) {
      this.cpuThrottleMillicores = cpuThrottleMillicores;
      return this;
    }

    /**
     * The limits.
     *
     * @throws SandboxException VALIDATION for a negative value or a memory cap below {@link
     *     #MIN_MEMORY_BYTES}
     */
    public ResourceLimits build() {
      return new ResourceLimits(
          cpuMillicores,
          memoryBytes,
          diskBytes,
          maxOutputBytes,
          maxProcesses,
          cpuThrottleMillicores);
    }
  }
}
