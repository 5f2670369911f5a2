package dev.confine;

/** The network posture a call asks for. Codes are the seed's and appear in messages. */
public enum NetMode {
  /** No network policy: the child uses the host's network. */
  DEFAULT(0),
  /** No network at all. */
  DENY_ALL(1),
  /** Only destinations the rules allow, through a filtering proxy. */
  ALLOW_LIST(2),
  /** Everything through a proxy (the rules' denies still apply). */
  PROXY(3);

  private final int code;

  NetMode(int code) {
    this.code = code;
  }

  /** The seed's integer code of this mode. */
  public int code() {
    return code;
  }

  /**
   * The mode with the seed's integer code.
   *
   * @throws SandboxException VALIDATION "sandbox: unknown net mode N" for any other code
   */
  public static NetMode ofCode(int code) {
    for (NetMode m : values()) {
      if (m.code == code) {
        return m;
      }
    }
    throw SandboxException.of(SandboxException.Kind.VALIDATION, "unknown net mode " + code);
  }
}
