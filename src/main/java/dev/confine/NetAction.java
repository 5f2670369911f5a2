package dev.confine;

/** What a {@link NetRule} does with a destination it matches. */
public enum NetAction {
  /** Refuse the destination; a deny always wins over an allow. */
  DENY(0, "deny"),
  /** Permit the destination. */
  ALLOW(1, "allow");

  private final int code;
  private final String label;

  NetAction(int code, String label) {
    this.code = code;
    this.label = label;
  }

  /** The seed's integer code of this action. */
  public int code() {
    return code;
  }

  /** {@code "deny"} or {@code "allow"}. */
  @Override
  public String toString() {
    return label;
  }
}
