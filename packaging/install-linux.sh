#!/usr/bin/env bash
# Install the Qoder Desktop bundle for the current user (Linux, no root needed).
#
# Usage: install-linux.sh [--bundle DIR] [--dest DIR | --in-place] [--no-bin-link]
#        install-linux.sh --uninstall [--dest DIR]
#
#   --bundle DIR   the built bundle (the folder holding the `qoder-desktop` executable).
#                  Default: the folder this script is in when it is inside a bundle,
#                  else dist/qoder-desktop next to this script's repository.
#   --dest DIR     where the bundle is copied to (default: ~/.local/lib/qoder-desktop).
#   --in-place     do not copy: the launcher points at the bundle where it is.
#   --no-bin-link  do not link ~/.local/bin/qoder-desktop to the bundle's executable.
#   --uninstall    remove what an install put in place.
#
# It puts, under ${XDG_DATA_HOME:-~/.local/share}:
#   applications/qoder-desktop.desktop           (Exec and TryExec point at the bundle)
#   icons/hicolor/scalable/apps/io.qoder.Desktop.svg
#   metainfo/io.qoder.Desktop.metainfo.xml
# The desktop files come from the bundle's resources/ folder, or the repository's.
set -euo pipefail

APP=qoder-desktop
APP_ID=io.qoder.Desktop
MARKER=.qoder-desktop-bundle
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
DATA_HOME="${XDG_DATA_HOME:-$HOME/.local/share}"
APPS_DIR="$DATA_HOME/applications"
ICON_DIR="$DATA_HOME/icons/hicolor/scalable/apps"
META_DIR="$DATA_HOME/metainfo"
BIN_DIR="$HOME/.local/bin"

bundle="" dest="$HOME/.local/lib/$APP" in_place=0 bin_link=1 uninstall=0
die() { echo "install-linux.sh: $*" >&2; exit 1; }
say() { echo "install-linux.sh: $*"; }

while [[ $# -gt 0 ]]; do
    case "$1" in
        --bundle) [[ $# -ge 2 ]] || die "--bundle needs a folder"; bundle="$2"; shift 2 ;;
        --dest) [[ $# -ge 2 ]] || die "--dest needs a folder"; dest="$2"; shift 2 ;;
        --in-place) in_place=1; shift ;;
        --no-bin-link) bin_link=0; shift ;;
        --uninstall) uninstall=1; shift ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown option $1 (see --help)" ;;
    esac
done
[[ "$dest" == /* ]] || dest="$PWD/$dest"

is_bundle() { [[ -f "$1/$APP" && -x "$1/$APP" && -d "$1/_internal" ]]; }

# Quote a path for a desktop entry's Exec key (Desktop Entry Specification, "Exec key"):
# reserved characters need double quotes, inside which " ` $ \ are backslash-escaped;
# then the string-value escaping doubles every backslash; a literal % is written %%.
exec_quote() {
    local p="$1"
    p="${p//%/%%}"
    local reserved='[[:space:]"'"'"'\\<>~|&;$*?#()`]'
    if [[ "$p" =~ $reserved ]]; then
        p="${p//\\/\\\\}"; p="${p//\"/\\\"}"; p="${p//\`/\\\`}"; p="${p//\$/\\\$}"
        p="\"$p\""
        p="${p//\\/\\\\}"
    fi
    printf '%s' "$p"
}

refresh_caches() {
    if command -v update-desktop-database >/dev/null 2>&1; then
        update-desktop-database -q "$APPS_DIR" 2>/dev/null || true
    fi
    if command -v gtk-update-icon-cache >/dev/null 2>&1 \
            && [[ -f "$DATA_HOME/icons/hicolor/index.theme" ]]; then
        gtk-update-icon-cache -q -t "$DATA_HOME/icons/hicolor" 2>/dev/null || true
    fi
}

if [[ $uninstall -eq 1 ]]; then
    rm -f "$APPS_DIR/$APP.desktop" "$ICON_DIR/$APP_ID.svg" "$META_DIR/$APP_ID.metainfo.xml"
    if [[ -L "$BIN_DIR/$APP" ]]; then
        rm -f "$BIN_DIR/$APP"
    fi
    if [[ -f "$dest/$MARKER" ]]; then
        rm -rf -- "$dest"
        say "removed the bundle in $dest"
    fi
    refresh_caches
    say "uninstalled (your settings and ledger in ~/.config and ~/.local/share/$APP are kept)"
    exit 0
fi

if [[ -z "$bundle" ]]; then
    if is_bundle "$SCRIPT_DIR"; then bundle="$SCRIPT_DIR"; else bundle="$SCRIPT_DIR/../dist/$APP"; fi
fi
[[ -d "$bundle" ]] || die "no bundle at $bundle: build it first (bash packaging/build.sh) or pass --bundle DIR"
bundle="$(cd "$bundle" && pwd)"
is_bundle "$bundle" || die "$bundle is not a Qoder Desktop bundle (no executable $APP and _internal/)"

resources=""
for candidate in "$bundle/resources" "$SCRIPT_DIR/resources" "$SCRIPT_DIR/../resources"; do
    if [[ -f "$candidate/$APP.desktop" ]]; then resources="$(cd "$candidate" && pwd)"; break; fi
done
[[ -n "$resources" ]] || die "cannot find the desktop files ($APP.desktop, $APP_ID.svg, $APP_ID.metainfo.xml)"
for file in "$APP.desktop" "$APP_ID.svg" "$APP_ID.metainfo.xml"; do
    [[ -f "$resources/$file" ]] || die "missing $resources/$file"
done

if [[ $in_place -eq 1 ]]; then
    target="$bundle"
else
    target="$dest"
    if [[ "$bundle" != "$target" ]]; then
        if [[ -e "$target" && ! -f "$target/$MARKER" ]]; then
            die "$target exists and was not made by this script; choose another --dest"
        fi
        mkdir -p "$(dirname "$target")"
        staging="$(mktemp -d "$(dirname "$target")/.$APP-install.XXXXXX")"
        trap 'rm -rf -- "$staging"' EXIT
        say "copying the bundle to $target"
        cp -a "$bundle/." "$staging/"
        touch "$staging/$MARKER"
        if [[ -e "$target" ]]; then rm -rf -- "$target"; fi
        mv "$staging" "$target"
        trap - EXIT
    fi
fi
executable="$target/$APP"
quoted="$(exec_quote "$executable")"

mkdir -p "$APPS_DIR" "$ICON_DIR" "$META_DIR"
# Exec=qoder-desktop ... -> Exec=<bundle>/qoder-desktop ... (also in desktop actions);
# ENVIRON, not -v, so that awk does not interpret the backslashes in the quoted path.
EXEC_PATH="$quoted" TRY_EXEC="$executable" awk -v app="$APP" '
    index($0, "Exec=" app) == 1 && (length($0) == length("Exec=" app) ||
        substr($0, length("Exec=" app) + 1, 1) == " ") {
        print "Exec=" ENVIRON["EXEC_PATH"] substr($0, length("Exec=" app) + 1); next }
    index($0, "TryExec=") == 1 { print "TryExec=" ENVIRON["TRY_EXEC"]; next }
    { print }
' "$resources/$APP.desktop" > "$APPS_DIR/.$APP.desktop.tmp"
mv "$APPS_DIR/.$APP.desktop.tmp" "$APPS_DIR/$APP.desktop"
chmod 0644 "$APPS_DIR/$APP.desktop"
install -m 0644 "$resources/$APP_ID.svg" "$ICON_DIR/$APP_ID.svg"
install -m 0644 "$resources/$APP_ID.metainfo.xml" "$META_DIR/$APP_ID.metainfo.xml"

if [[ $bin_link -eq 1 ]]; then
    mkdir -p "$BIN_DIR"
    if [[ -e "$BIN_DIR/$APP" && ! -L "$BIN_DIR/$APP" ]]; then
        say "kept $BIN_DIR/$APP (not a link made by this script)"
    else
        ln -sfn "$executable" "$BIN_DIR/$APP"
    fi
fi
refresh_caches

say "installed $APP from $target"
say "  launcher: $APPS_DIR/$APP.desktop"
say "  icon:     $ICON_DIR/$APP_ID.svg"
say "  metainfo: $META_DIR/$APP_ID.metainfo.xml"
say "check it with: $executable --self-check"
