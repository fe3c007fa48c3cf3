# Shared by the set-up scripts (sourced, not run). The caller defines say() and die().
#
#   as_root CMD...          run CMD as root (directly, or through passwordless sudo)
#   apt_install PKG...      install Debian packages that are not installed yet
#
# KAFKA_ASSIGNORS_NO_INSTALL=1 makes apt_install fail with the list instead of installing.

_ROOT_PREFIX=()
if [[ $(id -u) -ne 0 ]]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        _ROOT_PREFIX=(sudo -n)
    else
        _ROOT_PREFIX=(needs-root)
    fi
fi

as_root() {
    [[ "${_ROOT_PREFIX[*]-}" == needs-root ]] \
        && die "need root (or passwordless sudo) to run: $*"
    "${_ROOT_PREFIX[@]}" "$@"
}

_APT_UPDATED=0
apt_install() {
    local missing=() pkg
    for pkg in "$@"; do
        dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
    done
    ((${#missing[@]})) || return 0
    [[ "${KAFKA_ASSIGNORS_NO_INSTALL:-0}" == 1 ]] \
        && die "missing Debian packages: ${missing[*]} (KAFKA_ASSIGNORS_NO_INSTALL=1 forbids installing them)"
    command -v apt-get >/dev/null 2>&1 \
        || die "missing: ${missing[*]}; this is not a Debian/Ubuntu machine (no apt-get): install them by hand"
    say "installing ${missing[*]} (apt-get) ..."
    if [[ $_APT_UPDATED == 0 ]]; then
        DEBIAN_FRONTEND=noninteractive as_root timeout 600 apt-get update -q >/dev/null \
            || die "apt-get update failed"
        _APT_UPDATED=1
    fi
    DEBIAN_FRONTEND=noninteractive as_root timeout 900 \
        apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null \
        || die "apt-get install ${missing[*]} failed"
    hash -r
}
