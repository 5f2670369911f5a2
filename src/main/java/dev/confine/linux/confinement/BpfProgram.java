package dev.confine.linux.confinement;

import dev.confine.linux.libc.LibC;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A classic-BPF program assembled with named labels, so that a seccomp filter reads as its rules
 * instead of as hand-counted jump offsets. Only the instructions a seccomp filter needs: load a
 * 32-bit word of {@code struct seccomp_data}, compare the accumulator with a constant, return.
 */
final class BpfProgram {
  private static final int LD_ABS = LibC.BPF_LD() | LibC.BPF_W() | LibC.BPF_ABS();
  private static final int JEQ = LibC.BPF_JMP() | LibC.BPF_JEQ() | LibC.BPF_K();
  private static final int JSET = LibC.BPF_JMP() | LibC.BPF_JSET() | LibC.BPF_K();
  private static final int RET = LibC.BPF_RET() | LibC.BPF_K();

  /** One instruction; {@code jt}/{@code jf} name a label, or are null for the next instruction. */
  private record Insn(int code, String jt, String jf, int k) {}

  private final List<Insn> insns = new ArrayList<>();
  private final Map<String, Integer> labels = new HashMap<>();

  /** Loads the 32-bit word at {@code offset} of {@code struct seccomp_data}. */
  BpfProgram load(int offset) {
    insns.add(new Insn(LD_ABS, null, null, offset));
    return this;
  }

  /** Jumps to {@code ifEqual} when the accumulator equals {@code k}, else to {@code otherwise}. */
  BpfProgram jumpIfEqual(int k, String ifEqual, String otherwise) {
    insns.add(new Insn(JEQ, ifEqual, otherwise, k));
    return this;
  }

  /** Jumps to {@code label} when the accumulator equals {@code k}, else goes on. */
  BpfProgram jumpIfEqual(int k, String label) {
    return jumpIfEqual(k, label, null);
  }

  /** Jumps to {@code label} when the accumulator has any bit of {@code mask}, else goes on. */
  BpfProgram jumpIfAnyBit(int mask, String label) {
    insns.add(new Insn(JSET, label, null, mask));
    return this;
  }

  /** Returns {@code action} (a SECCOMP_RET_* value). */
  BpfProgram ret(int action) {
    insns.add(new Insn(RET, null, null, action));
    return this;
  }

  /** Names the next instruction. */
  BpfProgram label(String name) {
    if (labels.putIfAbsent(name, insns.size()) != null) {
      throw new IllegalStateException("label defined twice: " + name);
    }
    return this;
  }

  /**
   * The program as {code, jt, jf, k} rows with relative jumps.
   *
   * @throws IllegalStateException for an undefined label, a backward jump or one past 255 rows
   */
  int[][] assemble() {
    int[][] out = new int[insns.size()][];
    for (int i = 0; i < insns.size(); i++) {
      Insn in = insns.get(i);
      out[i] = new int[] {in.code(), offset(i, in.jt()), offset(i, in.jf()), in.k()};
    }
    if (out.length > 4096) {
      throw new IllegalStateException("a BPF program holds at most 4096 instructions");
    }
    return out;
  }

  private int offset(int from, String label) {
    if (label == null) {
      return 0;
    }
    Integer to = labels.get(label);
    if (to == null) {
      throw new IllegalStateException("undefined label " + label);
    }
    int d = to - from - 1;
    if (d < 0 || d > 255) {
      throw new IllegalStateException("jump to " + label + " out of range: " + d);
    }
    return d;
  }
}
