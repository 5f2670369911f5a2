package dev.confine;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The policy {@link Runners#composeLocal} puts around a backend.
 *
 * @param defaults the ceiling applied to every call (see {@link Runners#withDefaults})
 * @param allowedCommands the only commands that may run, or null for no allow-list (empty = none
 *     may run)
 * @param approver who decides on flagged requests, or null (flagged requests then fail closed)
 * @param predicates what needs approval, in order (never null; empty = no approval layer)
 */
public record LocalPolicy(
    ExecOptions defaults,
    List<String> allowedCommands,
    Approver approver,
    List<ExecPredicate> predicates) {

  /** Defaults null options and predicates, and copies the lists. */
  public LocalPolicy {
    defaults = ExecOptions.orDefaults(defaults);
    allowedCommands = allowedCommands == null ? null : List.copyOf(allowedCommands);
    predicates =
        predicates == null ? List.of() : Collections.unmodifiableList(new ArrayList<>(predicates));
  }

  /**
   * The default local policy: no defaults, no allow-list, and approval by {@code approver} for a
   * work dir outside {@code root}, a non-default network, and (when any are given) commands
   * matching {@code sensitiveCommands} (see {@link ExecPredicate#commandPatterns}).
   */
  public static LocalPolicy defaults(String root, Approver approver, String... sensitiveCommands) {
    List<ExecPredicate> predicates = new ArrayList<>();
    predicates.add(ExecPredicate.workDirOutsideRoot(root));
    predicates.add(ExecPredicate.netNonDefault());
    if (sensitiveCommands.length > 0) {
      predicates.add(ExecPredicate.commandPatterns(sensitiveCommands));
    }
    return new LocalPolicy(ExecOptions.defaults(), null, approver, predicates);
  }
}
