package dev.confine;

/** An approver's answer. */
public enum Decision {
  /** Do not run the command. */
  DENY,
  /** Run the command. */
  ALLOW
}
