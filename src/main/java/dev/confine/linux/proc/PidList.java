package dev.confine.linux.proc;

import java.util.Arrays;

/** A growable list of pids, reused from sample to sample so that sampling allocates nothing. */
public final class PidList {
  private int[] pids = new int[64];
  private int size;

  void add(int pid) {
    if (size == pids.length) {
      pids = Arrays.copyOf(pids, size * 2);
    }
    pids[size++] = pid;
  }

  int get(int i) {
    return pids[i];
  }

  public int size() {
    return size;
  }

  void clear() {
    size = 0;
  }
}
