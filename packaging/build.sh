#!/usr/bin/env bash
# Build the one-folder desktop bundle dist/qoder-desktop/ with PyInstaller.
#
# Usage: bash packaging/build.sh
#
# The Python that builds (and whose site-packages are bundled) is, in this order:
# $PYTHON, the active virtualenv ($VIRTUAL_ENV), ./.venv (created with the app installed
# when missing). PyInstaller is a build tool, not a dependency of the app: this script
# installs it into that environment. The bundle holds both agent CLIs (~600 MB), so a
# build takes a few minutes. Afterwards it checks the bundle: the CLIs are there and
# executable, the Qt plugins and the phone page the app needs are there, and `--version`
# answers (`--self-check` then proves more, e.g. that Away mode can serve the page).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PYINSTALLER_REQ="${PYINSTALLER_REQ:-pyinstaller>=6.10,<7}"
DIST="$ROOT/dist"
WORK="$ROOT/build/pyinstaller"
BUNDLE="$DIST/qoder-desktop"

if [[ -z "${PYTHON:-}" ]]; then
    if [[ -n "${VIRTUAL_ENV:-}" && -x "$VIRTUAL_ENV/bin/python" ]]; then
        PYTHON="$VIRTUAL_ENV/bin/python"
    else
        if [[ ! -x .venv/bin/python ]]; then
            echo "build.sh: creating .venv with Qoder Desktop installed"
            python3 -m venv .venv
            .venv/bin/python -m pip install -q --upgrade pip
            .venv/bin/python -m pip install -q -e .
        fi
        PYTHON="$ROOT/.venv/bin/python"
    fi
fi
echo "build.sh: building with $PYTHON"

if ! "$PYTHON" -c "import qoder_desktop, claude_agent_sdk, qoder_agent_sdk" 2>/dev/null; then
    echo "build.sh: $PYTHON cannot import qoder_desktop and both SDKs; run: $PYTHON -m pip install -e ." >&2
    exit 2
fi
"$PYTHON" -m pip install -q "$PYINSTALLER_REQ"

start=$(date +%s)
"$PYTHON" -m PyInstaller --noconfirm --log-level WARN \
    --distpath "$DIST" --workpath "$WORK" packaging/qoder-desktop.spec
elapsed=$(( $(date +%s) - start ))

# --- check what came out -----------------------------------------------------------
fail=0
need() {  # need DESCRIPTION GLOB...: at least one file matches one of the globs
    local what="$1"; shift
    local pattern
    for pattern in "$@"; do
        if compgen -G "$BUNDLE/$pattern" >/dev/null; then return 0; fi
    done
    echo "build.sh: MISSING $what ($*)" >&2
    fail=1
}
for cli in _internal/claude_agent_sdk/_bundled/claude _internal/qoder_agent_sdk/_bundled/qodercli; do
    if [[ ! -x "$BUNDLE/$cli" ]]; then
        echo "build.sh: MISSING or not executable: $cli" >&2
        fail=1
    fi
done
QT_PLUGINS="_internal/PySide6/Qt/plugins"
need "Qt X11 platform plugin" "$QT_PLUGINS/platforms/libqxcb.so"
need "Qt Wayland platform plugin" "$QT_PLUGINS/platforms/libqwayland*.so"
need "Qt offscreen platform plugin" "$QT_PLUGINS/platforms/libqoffscreen.so"
need "Qt platform themes (GTK/xdg portal)" "$QT_PLUGINS/platformthemes/*.so"
need "Qt input contexts (compose keys, IBus)" "$QT_PLUGINS/platforminputcontexts/*.so"
need "Qt SVG image format" "$QT_PLUGINS/imageformats/libqsvg.so"
need "Qt SVG icon engine" "$QT_PLUGINS/iconengines/libqsvgicon.so"
need "Qt xcb GL integration" "$QT_PLUGINS/xcbglintegrations/*.so"
need "Qt Wayland shell integration" "$QT_PLUGINS/wayland-shell-integration/*.so"
need "scripted scenarios" "_internal/qoder_desktop/scripted_model/scenarios/demo.json"
need "ui resources" "_internal/qoder_desktop/ui/resources/style.qss" \
    "_internal/qoder_desktop/ui/resources/app-icon-256.png" \
    "_internal/qoder_desktop/ui/resources/tray-icon-22.png"
need "phone page (Away mode)" "_internal/qoder_desktop/away/page/index.html"
need "phone page scripts (Away mode)" "_internal/qoder_desktop/away/page/app.js"
need "desktop files" "resources/qoder-desktop.desktop"
need "install script" "install-linux.sh"
version="$("$BUNDLE/qoder-desktop" --version)" || fail=1
if [[ $fail -ne 0 ]]; then
    echo "build.sh: the bundle in $BUNDLE is incomplete" >&2
    exit 1
fi

size="$(du -sh "$BUNDLE" | cut -f1)"
echo "build.sh: built $version in ${elapsed}s: $BUNDLE ($size)"
echo "build.sh: check it:   $BUNDLE/qoder-desktop --self-check"
echo "build.sh: install it: $BUNDLE/install-linux.sh"
