# Sourced by the scripts in this folder: finds a JDK >= 22 and exports JAVA_HOME and PATH for it.
# Order: $JAVA_HOME when it is new enough, else the newest JDK under /usr/lib/jvm.

confine_java_feature() { # prints the feature release of the JDK at $1 (e.g. 25), or nothing
  local rel="$1/release" v
  [ -x "$1/bin/javac" ] || return 0
  if [ -r "$rel" ]; then
    v=$(sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$rel")
  else
    v=$("$1/bin/java" -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n 1)
  fi
  printf '%s' "$v"
}

confine_find_jdk() {
  local min=22 best="" best_v=0 dir v
  if [ -n "${JAVA_HOME:-}" ]; then
    v=$(confine_java_feature "$JAVA_HOME")
    if [ -n "$v" ] && [ "$v" -ge "$min" ]; then
      best="$JAVA_HOME" best_v="$v"
    fi
  fi
  if [ -z "$best" ]; then
    for dir in /usr/lib/jvm/*; do
      [ -d "$dir" ] && [ ! -L "$dir" ] || continue
      v=$(confine_java_feature "$dir")
      if [ -n "$v" ] && [ "$v" -ge "$min" ] && [ "$v" -gt "$best_v" ]; then
        best="$dir" best_v="$v"
      fi
    done
  fi
  if [ -z "$best" ]; then
    cat >&2 <<MSG
confine: no JDK $min or newer found (looked at JAVA_HOME=${JAVA_HOME:-unset} and /usr/lib/jvm/*).
Confine uses the Foreign Function & Memory API, final in Java 22. Install a JDK 22+ (for example
Debian/Ubuntu: 'apt-get install openjdk-25-jdk-headless' where your release has it, or a Temurin 25
package) and set JAVA_HOME to it.
MSG
    return 1
  fi
  export JAVA_HOME="$best"
  export PATH="$JAVA_HOME/bin:$PATH"
}

# Maven's own libraries call sun.misc.Unsafe; on JDK 24+ that prints a warning on every run.
confine_quiet_maven() {
  if [ "$(confine_java_feature "$JAVA_HOME")" -ge 24 ]; then
    export MAVEN_OPTS="${MAVEN_OPTS:-} --sun-misc-unsafe-memory-access=allow"
  fi
}
