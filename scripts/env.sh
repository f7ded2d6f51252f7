# Sourced by the Makefile's recipes: picks a JDK >= 21 (Temurin 25 on this machine kind).
# shellcheck shell=bash
pick_java_home() {
  local candidates=("${JAVA_HOME:-}" /usr/lib/jvm/temurin-25-jdk-amd64 /usr/lib/jvm/temurin-21-jdk-amd64 /usr/lib/jvm/java-21-openjdk-amd64)
  for home in "${candidates[@]}"; do
    [ -n "$home" ] && [ -x "$home/bin/java" ] || continue
    local major
    major=$("$home/bin/java" -XshowSettings:properties -version 2>&1 | awk -F'= ' '/java.specification.version/ {print $2}')
    if [ "${major:-0}" -ge 21 ] 2>/dev/null; then
      echo "$home"
      return 0
    fi
  done
  return 1
}
if ! JAVA_HOME=$(pick_java_home); then
  echo "error: a JDK 21 or newer is needed (Temurin 25 expected at /usr/lib/jvm/temurin-25-jdk-amd64); set JAVA_HOME to one." >&2
  exit 1
fi
export JAVA_HOME
export PATH="$JAVA_HOME/bin:$PATH"
