# Sourced by the ad hoc benchmark scripts (bench/tls, bench/h2): `need TOOL=PACKAGE ...` installs
# from Debian each tool that is not on the PATH (as bench/run does for the suite), so that a
# script on a fresh machine runs, or stops naming what is missing, instead of failing half-way
# (a server that cannot start reads as a measurement that ended early).
need() {
  local missing=() pair
  for pair in "$@"; do
    command -v "${pair%%=*}" >/dev/null 2>&1 || missing+=("${pair#*=}")
  done
  ((${#missing[@]})) || return 0
  echo "installing from Debian: ${missing[*]}" >&2
  local sudo_=""
  [[ $(id -u) -eq 0 ]] || sudo_="sudo"
  if ! { $sudo_ apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo_ apt-get install -y -qq \
        --no-install-recommends "${missing[@]}"; } >/dev/null 2>&1; then
    echo "$(basename "$0"): could not install ${missing[*]} (apt-get install -y ${missing[*]})" >&2
    exit 1
  fi
}
