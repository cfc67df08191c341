#!/usr/bin/env bash
# The .deb installs into a clean prefix and runs from it: cpack -G DEB from the build tree,
# dpkg -x into a temporary root, then the binary's --version and --help (with the GUI module's
# view names), the binary without its module, and the desktop entry,
# icon and AppStream metainfo (validated with appstreamcli when it is there).
# usage: package_deb.sh BUILD_DIR VERSION
set -euo pipefail
build="$(cd "$1" && pwd)" version="$2"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && cpack --config "$build/CPackConfig.cmake" -G DEB >/dev/null)
deb="$tmp/weightscope_${version}_amd64.deb"
[ -f "$deb" ] || { echo "FAIL: no $deb"; exit 1; }
dpkg-deb -f "$deb" Depends | grep -q libqt6widgets6 || { echo "FAIL: the package does not depend on Qt"; exit 1; }
dpkg -x "$deb" "$tmp/root"
out="$("$tmp/root/usr/bin/weightscope" --version)"
[ "$out" = "weightscope $version" ] || { echo "FAIL: --version printed '$out'"; exit 1; }
# Read whole before grep: grep -q stops at its match, and a help longer than one pipe write then
# dies of SIGPIPE, which pipefail reports as a failure.
help="$("$tmp/root/usr/bin/weightscope" --help)"
grep -q -- "--diff A B" <<<"$help" || { echo "FAIL: --help lacks the GUI usage"; exit 1; }
# The view names come from the GUI module, found in usr/lib/weightscope and loaded (every symbol
# resolved against the binary's core) only when asked for.
grep -q "VIEW: tree " <<<"$help" || { echo "FAIL: --help does not list the views: the GUI module did not load"; exit 1; }
# The binary without its module: the commands run, and a window asked for says what is missing.
mkdir "$tmp/alone" && cp "$tmp/root/usr/bin/weightscope" "$tmp/alone/"
[ "$("$tmp/alone/weightscope" --version)" = "weightscope $version" ] || { echo "FAIL: the binary alone does not run"; exit 1; }
set +e
err="$(DISPLAY= QT_QPA_PLATFORM=offscreen "$tmp/alone/weightscope" "$tmp/no-such-checkpoint" 2>&1 >/dev/null)"; rc=$?
set -e
[ "$rc" = 2 ] && grep -q "the desktop GUI could not be loaded: weightscope-gui.so is neither beside" <<<"$err" || { echo "FAIL: without its module, exit $rc: $err"; exit 1; }
for f in usr/share/applications/weightscope.desktop usr/share/icons/hicolor/scalable/apps/weightscope.svg \
         usr/share/metainfo/io.github.weightscope.Weightscope.metainfo.xml; do
  [ -s "$tmp/root/$f" ] || { echo "FAIL: $f missing"; exit 1; }
done
if command -v appstreamcli >/dev/null; then
  appstreamcli validate --no-net "$tmp/root/usr/share/metainfo/io.github.weightscope.Weightscope.metainfo.xml" >/dev/null
fi
echo "ok: $(basename "$deb") ($(du -h "$deb" | cut -f1)) installs under a clean root and runs: $out"
