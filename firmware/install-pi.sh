#!/usr/bin/env bash
# Install Tower Companion on Raspberry Pi OS as a systemd service.
#
#   sudo firmware/install-pi.sh [--user NAME] [--prefix DIR] [--data DIR] [--dry-run] [--print-unit]
#
# Steps, each skipped when already done (so running it again is safe):
#   1. Debian packages: python3-picamera2 python3-lgpio espeak-ng python3-venv
#   2. the service user (default: the user who ran sudo) in the gpio and video groups
#   3. a venv with --system-site-packages (picamera2 and lgpio come from apt) and the package
#   4. the data folder (owned by the user) with a starter config.toml
#   5. the systemd unit (Type=notify, watchdog, Restart=on-failure), enabled and (re)started
# --dry-run prints what would be done and changes nothing (needs no root);
# --print-unit prints the unit file it would install, and nothing else.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source_dir=$(dirname "$here")
service_name=tower-companion
unit_path=/etc/systemd/system/$service_name.service
prefix=/opt/tower-companion
data=/var/lib/tower-companion
user=${SUDO_USER:-}
dry_run=0
print_unit=0
packages=(python3-picamera2 python3-lgpio espeak-ng python3-venv)

usage() {
    sed -n '2,13s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"
}

die() {
    echo "install-pi.sh: error: $*" >&2
    exit 2
}

while [ $# -gt 0 ]; do
    case $1 in
        --dry-run) dry_run=1 ;;
        --print-unit) print_unit=1 ;;
        --user) [ $# -ge 2 ] || die "--user needs a name"; user=$2; shift ;;
        --prefix) [ $# -ge 2 ] || die "--prefix needs a folder"; prefix=$2; shift ;;
        --data) [ $# -ge 2 ] || die "--data needs a folder"; data=$2; shift ;;
        -h|--help) usage; exit 0 ;;
        *) die "unknown option $1 (see --help)" ;;
    esac
    shift
done

[ -n "$user" ] || user=$(id -un)
[ "$user" != root ] || die "the service must run as a normal user, not root: pass --user NAME"
case $prefix$data in
    *[[:space:]]*) die "--prefix and --data must not contain spaces" ;;
esac
[[ $prefix == /* && $data == /* ]] || die "--prefix and --data must be absolute paths"
# onnxruntime, which runs the counter's net, publishes wheels for 64-bit systems only
machine=$(uname -m)
case $machine in
    aarch64|x86_64) ;;
    *) die "needs 64-bit Raspberry Pi OS: onnxruntime, which runs the counter, has no build for $machine" ;;
esac
[ -f "$source_dir/pyproject.toml" ] || die "$source_dir is not the Tower Companion source (no pyproject.toml)"
config=$data/config.toml
unit=$(sed -e "s|@USER@|$user|g" -e "s|@PREFIX@|$prefix|g" -e "s|@DATA@|$data|g" \
           -e "s|@CONFIG@|$config|g" "$here/$service_name.service")
if [ "$print_unit" = 1 ]; then
    printf '%s\n' "$unit"
    exit 0
fi
if [ "$dry_run" = 0 ] && [ "$(id -u)" != 0 ]; then
    die "run it with sudo (or try --dry-run)"
fi

# Print a command; run it unless this is a dry run.
run() {
    echo "+ $*"
    if [ "$dry_run" = 0 ]; then
        "$@"
    fi
}

# Write stdin to a file when its content differs; returns 0 if the file changed.
write_if_changed() {
    local path=$1 mode=$2 owner=$3 content
    content=$(cat)
    if [ -f "$path" ] && [ "$(cat "$path")" = "$content" ]; then
        echo "= $path is up to date"
        return 1
    fi
    echo "+ write $path (mode $mode, owner $owner):"
    printf '%s\n' "$content" | sed 's/^/    | /'
    if [ "$dry_run" = 0 ]; then
        printf '%s\n' "$content" > "$path.new"
        chmod "$mode" "$path.new"
        chown "$owner" "$path.new"
        mv "$path.new" "$path"
    fi
    return 0
}

echo "Tower Companion: installing from $source_dir for user $user"
echo "  venv $prefix/venv, data $data, unit $unit_path$([ "$dry_run" = 1 ] && echo ' (dry run: nothing is changed)')"

# 1. Debian packages.
missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
    run apt-get update
    run env DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}"
else
    echo "= Debian packages present: ${packages[*]}"
fi

# 2. The user and its groups.
if ! id "$user" >/dev/null 2>&1; then
    run useradd --system --create-home --home-dir "/home/$user" --shell /usr/sbin/nologin "$user"
fi
for group in gpio video; do
    if ! getent group "$group" >/dev/null; then
        run groupadd --system "$group"
    fi
    if id -nG "$user" 2>/dev/null | tr ' ' '\n' | grep -qx "$group"; then
        echo "= $user is in group $group"
    else
        run usermod -aG "$group" "$user"
    fi
done

# 3. The venv (system site packages: picamera2 and lgpio are apt's) and the package.
if [ -x "$prefix/venv/bin/python" ]; then
    echo "= venv $prefix/venv exists"
else
    run mkdir -p "$prefix"
    run python3 -m venv --system-site-packages "$prefix/venv"
fi
# From a copy, so the build leaves no root-owned files in the checkout.
run rm -rf "$prefix/src"
run mkdir -p "$prefix/src"
echo "+ copy $source_dir to $prefix/src (without .git, .venv and caches)"
if [ "$dry_run" = 0 ]; then
    tar -C "$source_dir" --exclude=.git --exclude=.venv --exclude=__pycache__ --exclude='*.egg-info' \
        --exclude=build --exclude=.pytest_cache --exclude=.hypothesis -cf - . | tar -C "$prefix/src" -xf -
fi
run "$prefix/venv/bin/pip" install --quiet --upgrade "$prefix/src"

# 4. The data folder, writable by the service user only, and a starter configuration.
group=$(id -gn "$user" 2>/dev/null || echo "$user")
run install -d -m 0750 -o "$user" -g "$group" "$data"
if [ -f "$config" ]; then
    echo "= $config exists (kept as it is)"
else
    write_if_changed "$config" 0640 "$user:$group" <<EOF || true
# Tower Companion settings; defaults are documented in companion/config.py.
# Phones at the table reach the page on this Pi's address; changes need the table's PIN.
[web]
host = "0.0.0.0"
port = 8080
EOF
fi

# 5. The systemd unit.
if write_if_changed "$unit_path" 0644 root:root <<<"$unit"; then
    if [ "$dry_run" = 0 ] && command -v systemd-analyze >/dev/null; then
        run systemd-analyze verify "$unit_path"
    fi
    run systemctl daemon-reload
    run systemctl enable "$service_name"
    run systemctl restart "$service_name"
else
    run systemctl enable --now "$service_name"
fi

echo "Done. Check it with: $prefix/venv/bin/companion doctor --data $data   and   systemctl status $service_name"
