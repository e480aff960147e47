# Shared by .ci/test and the scripts it sources (.ci/install.d/*.sh) or runs
# (.ci/stages/*.sh): apt installs into a private archive cache, and logging.
# Source it; it defines functions and variables only.

# FAULTLINE_TEST_CACHE holds everything the test command builds or downloads
# outside the checkout: apt archives, regenerated corpora, tool installs.
: "${FAULTLINE_TEST_CACHE:=${XDG_CACHE_HOME:-$HOME/.cache}/faultline-test}"
export FAULTLINE_TEST_CACHE
mkdir -p "$FAULTLINE_TEST_CACHE"

ci_start=${ci_start:-$SECONDS}
log() { printf '== %s (%ds)\n' "$*" $((SECONDS - ci_start)); }

# apt_install PKG...: installs the packages not installed yet. apt waits for
# the dpkg lock (other apt runs on the machine) and keeps its .debs in a
# private directory: a docker-clean hook deletes the shared archive cache
# after every apt run. apt-get update runs once per test command.
apt_archives=$FAULTLINE_TEST_CACHE/apt-archives
apt_install() {
	local missing=() p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	log "apt-get install ${missing[*]}"
	local sudo=""
	[ "$(id -u)" -eq 0 ] || sudo="sudo"
	mkdir -p "$apt_archives/partial"
	local opts=(-o DPkg::Lock::Timeout=600 -o "Dir::Cache::Archives=$apt_archives")
	if [ -z "${FAULTLINE_APT_UPDATED:-}" ]; then
		$sudo apt-get "${opts[@]}" update -qq
		export FAULTLINE_APT_UPDATED=1
	fi
	# A dpkg run killed earlier on this machine (an install cut off by a
	# timeout) leaves packages half-configured, and apt then refuses every
	# install ("dpkg was interrupted"): finish their configuration first.
	if [ -n "$($sudo dpkg --audit 2>/dev/null)" ] || ! apt_try "${opts[@]}" install -y -qq --no-install-recommends "${missing[@]}"; then
		log "dpkg --configure -a (an earlier dpkg run was interrupted)"
		dpkg_configure_pending
		apt_try "${opts[@]}" install -y -qq --no-install-recommends "${missing[@]}"
	fi
}

# apt_try ARGS...: one apt-get run, its warnings shown only when it fails.
apt_try() {
	DEBIAN_FRONTEND=noninteractive $sudo apt-get "$@" >/dev/null 2>"$FAULTLINE_TEST_CACHE/apt.err" ||
		{ cat "$FAULTLINE_TEST_CACHE/apt.err" >&2; return 1; }
}

# dpkg_configure_pending configures what an interrupted dpkg left
# unconfigured, waiting up to 10 minutes for the dpkg lock as apt does.
dpkg_configure_pending() {
	local i
	for i in $(seq 60); do
		DEBIAN_FRONTEND=noninteractive $sudo dpkg --configure -a && return 0
		sleep 10
	done
	return 1
}
