#!/usr/bin/env bash
# The whole test suite on a fresh machine: installs what the suite needs when it is missing (npm
# packages; redis-server, Dovecot, bubblewrap, OpenSSH, ripgrep, ffmpeg, espeak-ng, chromium, tmux and
# ngIRCd from the OS packages), then runs every test once.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v redis-server >/dev/null 2>&1 || need_apt+=(redis-server)
# The agent's tools and their tests: the command sandbox, an sshd for the ssh backend, ripgrep for
# search_files, ffmpeg and espeak-ng for audio.
command -v bwrap >/dev/null 2>&1 || need_apt+=(bubblewrap)
[ -x /usr/sbin/sshd ] || need_apt+=(openssh-server)
command -v ssh >/dev/null 2>&1 || need_apt+=(openssh-client)
command -v rg >/dev/null 2>&1 || need_apt+=(ripgrep)
# herald skills install from git repositories (a bare repository over file:// in the tests).
command -v git >/dev/null 2>&1 || need_apt+=(git)
# python3 inside the sandbox (/usr/bin): the sandbox tests' memory hog and the workspace-race swapper.
[ -x /usr/bin/python3 ] || need_apt+=(python3)
command -v ffmpeg >/dev/null 2>&1 || need_apt+=(ffmpeg)
command -v espeak-ng >/dev/null 2>&1 || need_apt+=(espeak-ng)
# The dashboard's tests drive a real headless Chromium through puppeteer-core.
[ -x /usr/bin/chromium ] || need_apt+=(chromium)
# herald chat's terminal UI is driven in a real terminal: tmux.
command -v tmux >/dev/null 2>&1 || need_apt+=(tmux)
# ngIRCd: the IRC adapter's tests run against a private one.
[ -x /usr/sbin/ngircd ] || need_apt+=(ngircd)
command -v openssl >/dev/null 2>&1 || need_apt+=(openssl)
{ { command -v dovecot >/dev/null 2>&1 || [ -x /usr/sbin/dovecot ]; } && [ -x /usr/lib/dovecot/lmtp ] && [ -x /usr/lib/dovecot/imap ]; } || need_apt+=(dovecot-imapd dovecot-lmtpd)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "installing OS packages: ${need_apt[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "installing npm packages"
  # npm ci refuses this lockfile under npm 11 (it wants the other platforms' optional packages listed).
  npm install --no-audit --no-fund
fi

report="$(mktemp -t herald-vitest-XXXXXX.json)"
status=0
npx vitest run --reporter=default --reporter=json --outputFile.json="$report" "$@" || status=$?
node -e '
  const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  console.log(`${r.numPassedTests} passed, ${r.numFailedTests} failed` + (r.numPendingTests ? `, ${r.numPendingTests} skipped` : ""));
' "$report" || true
rm -f "$report"
exit $status
