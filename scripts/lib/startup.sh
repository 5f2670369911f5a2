# Sourced by scripts/confine and scripts/install: how the confine command's JVM starts, and the
# training run that builds its start-up cache (JDK 25's AOT cache, JEP 483/514/515).

# The JVM options of every confine command. Measured with scripts/bench --startup; see
# docs/cli.md, "Start-up".
#   SerialGC            a command's heap is small: no GC worker threads to start
#   TieredStopAtLevel=1 C1 only: a command runs for milliseconds, C2 would not pay back
#   -UsePerfData        no hsperfdata file written per run
#   -Xlog               JVM warnings go to stderr, never into the child's stdout; a cache the JVM
#                       cannot use (another JDK, a moved jar) is dropped silently
CONFINE_JVM_FLAGS=(
  --enable-native-access=ALL-UNNAMED
  -XX:+UseSerialGC
  -XX:TieredStopAtLevel=1
  -XX:-UsePerfData
  -Xlog:disable
  "-Xlog:all=warning,aot*=off,cds*=off:stderr"
)

# The feature release of the java at $1/bin/java from its release file (no JVM started), or nothing.
confine_java_release() {
  [ -x "$1/bin/java" ] && [ -r "$1/release" ] || return 0
  sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$1/release"
}

# confine_train_aot JAVA_HOME CLASSPATH CACHE: runs the training commands once (dev.confine.cli.
# AotTraining, in an empty directory) and writes the AOT cache to CACHE. JDKs before 25 have no
# one-step AOT cache: then it writes nothing and succeeds. Output goes to stderr on failure only.
confine_train_aot() {
  local java_home=$1 cp=$2 cache=$3 dir log status=0
  [ "$(confine_java_release "$java_home")" -ge 25 ] 2>/dev/null || return 0
  dir=$(mktemp -d "${TMPDIR:-/tmp}/confine-train.XXXXXX")
  log="$dir.log"
  rm -f -- "$cache"
  (cd "$dir" && "$java_home/bin/java" "${CONFINE_JVM_FLAGS[@]}" -XX:AOTCacheOutput="$cache" \
    -cp "$cp" dev.confine.cli.AotTraining) >"$log" 2>&1 </dev/null || status=$?
  if [ "$status" -ne 0 ] || [ ! -s "$cache" ]; then
    cat "$log" >&2
    echo "confine: building the start-up cache failed (the command works without it, slower)" >&2
    rm -f -- "$cache"
  fi
  rm -rf -- "$dir" "$log"
  return 0
}
