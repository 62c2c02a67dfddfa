# shellcheck shell=bash disable=SC2154
# ports/deb.sh -- what ports/ucx/deb and ports/mpich/deb share: Debian's source package of
# the port rebuilt as binary packages with the vmatch patch series in debian/patches, a
# build dependency on libvmatch-dev and a version of its own.  Sourced after ports/lib.sh
# (which sets $port, $port_version, $work, $here, $repo); sets
#   deb_dir      $work/deb, everything of the packages: vmatch/ (vmatch's .debs), the
#                unpacked source $port-$port_version, the port's .debs, build.log
#   deb_suffix   +vmatch0.2.0+inline5: what the port's version gets after Debian's, the
#                version of the libvmatch it is built against (scripts/deb's upstream part)
deb_dir=$work/deb
deb_src=$deb_dir/$port-$port_version
vmatch_versions "$repo"
vmatch_abi=${vmatch_version%.*}
# The .deb names (the package and the version of its file name).
vmatch_lib_pkg=libvmatch$vmatch_abi
# The version of vmatch_inline.h's layouts: libvmatch0.2 provides libvmatch-inline-abiN
# (packaging/debian/rules) and the patched package depends on it, since it compiles the
# header's calls in and so needs a library of this header's version, which the soname does
# not say before 1.0.  The version of vmatch's packages carries it (0.2.0+inline5-1,
# docs/packages.md), and so does the port's: a rebuild against another inline version is
# another package version.
vmatch_inline=$vmatch_inline_abi
[ -n "$vmatch_inline" ] || {
    echo "ports/deb.sh: no VMATCH_INLINE_ABI in include/vmatch_inline.h" >&2
    exit 1
}
vmatch_inline_pkg=libvmatch-inline-abi$vmatch_inline
# the upstream part of the version of vmatch's packages (scripts/deb)
vmatch_version=$vmatch_version+inline$vmatch_inline
deb_suffix=+vmatch$vmatch_version

# deb_vmatch: vmatch's packages built by scripts/deb into $deb_dir/vmatch (at nice 19, as
# the port's build: without nocheck it builds and runs vmatch's whole suite) and installed
# (the port's build needs libvmatch-dev).
deb_vmatch() {
    log "vmatch's packages (scripts/deb, log: $deb_dir/vmatch/build.log)"
    nice -n 19 "$repo/scripts/deb" --out "$deb_dir/vmatch" >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --allow-downgrades \
        "$deb_dir/vmatch/${vmatch_lib_pkg}"_*.deb "$deb_dir"/vmatch/libvmatch-dev_*.deb >/dev/null
}

# deb_source VERSION: a fresh copy of Debian's source package VERSION in $deb_src, from the
# .dsc the port's build fetched into $work, else apt-get source (a deb-src entry is added
# as ports/*/build do).  Without either it stops saying what is missing, with apt's last
# words (the whole in $deb_dir/source.log).
deb_source() {
    local ver=$1 dsc=$work/${port}_$1.dsc
    mkdir -p "$deb_dir"
    if [ ! -f "$dsc" ]; then
        log "apt-get source --download-only $port=$ver ($work)"
        if ! (ensure_deb_src && cd "$work" && apt-get source -q --download-only "$port=$ver") \
            >"$deb_dir/source.log" 2>&1 || [ ! -f "$dsc" ]; then
            sed -n 's/^[EW]: /   apt: /p' "$deb_dir/source.log" | tail -3 >&2
            echo "ports/$port/deb: cannot fetch Debian's source package $port $ver: no $dsc," \
                "and apt-get source failed (it needs a deb-src entry for bookworm main that" \
                "apt can reach; log: $deb_dir/source.log)" >&2
            return 1
        fi
    fi
    rm -rf "$deb_src"
    local out # (gpgv's "no public key" would be noise: apt checked the files' hashes)
    out=$(dpkg-source -q -x "$dsc" "$deb_src" 2>&1) || {
        echo "$out" >&2
        echo "ports/$port/deb: $dsc does not unpack (a file of the source package missing?)" >&2
        return 1
    }
}

# deb_patch PACKAGE: the vmatch series appended to debian/patches/series, libvmatch-dev
# added to the build dependencies (and a dependency of the PACKAGE that links it: dh's
# shlibs would give it too, this says so in the control file, with the inline layouts'
# version, which shlibs cannot say), and a changelog entry.
deb_patch() {
    local pkg=$1 p old ver
    while read -r p; do
        case $p in '' | '#'*) continue ;; esac
        cp "$here/patches/$p" "$deb_src/debian/patches/vmatch-$p"
        echo "vmatch-$p" >>"$deb_src/debian/patches/series"
    done <"$here/patches/series"
    # the headers of this minor version (before 1.0 the next one may change the ABI)
    local next=${vmatch_abi%.*}.$((${vmatch_abi#*.} + 1))~
    sed -i "s/^Build-Depends: /Build-Depends: libvmatch-dev (>= $vmatch_abi.0), libvmatch-dev (<< $next), /" \
        "$deb_src/debian/control"
    sed -i "/^Package: $pkg\$/,/^\$/ s/^Depends: /Depends: $vmatch_lib_pkg, $vmatch_inline_pkg, /" "$deb_src/debian/control"
    old=$(dpkg-parsechangelog -l "$deb_src/debian/changelog" -S Version)
    ver=$old$deb_suffix
    {
        printf '%s (%s) bookworm; urgency=medium\n\n' "$port" "$ver"
        printf '  * %s tag matching through vmatch %s (libvmatch), the patch series of\n' "$port_name" "$vmatch_abi"
        printf '    vmatch'"'"'s ports/%s added to debian/patches.\n\n' "$port"
        printf ' -- vmatch maintainers <maintainers@users.noreply.a-seed-a1c2f01d.example>  %s\n\n' \
            "$(date -R)"
        cat "$deb_src/debian/changelog"
    } >"$deb_src/debian/changelog.new"
    mv "$deb_src/debian/changelog.new" "$deb_src/debian/changelog"
}

# deb_rules_libs: UCX's and MPICH's configure take vmatch from the environment, as
# ports/*/build give it; in /usr only the library needs naming (export LIBS in debian/rules).
deb_rules_libs() {
    sed -i "0,/^%:/ s/^%:/# vmatch: $port_name's matching through libvmatch (ports\/$port\/patches)\nexport LIBS += -lvmatch\n\n%:/" \
        "$deb_src/debian/rules"
    grep -q '^export LIBS += -lvmatch' "$deb_src/debian/rules"
}

# deb_check_series: dpkg-source applies the series (Debian's patches are applied by the
# unpacking): a patch that does not apply stops here, before the build dependencies.
deb_check_series() {
    local out
    out=$(cd "$deb_src" && dpkg-source --before-build . 2>&1) || {
        echo "$out" | tail -10 >&2
        echo "ports/$port/deb: the vmatch series does not apply to Debian's $port source" >&2
        return 1
    }
    echo "$out" | grep 'applying vmatch-' | sed 's/^dpkg-source: info: /   /'
}

# deb_build [-b|-B]: the build dependencies (apt-get build-dep of the patched source), then
# dpkg-buildpackage -b (all packages) or -B (the architecture's only: with it apt-get
# build-dep leaves out Build-Depends-Indep); the .debs land in $deb_dir.  DEB_BUILD_OPTIONS
# as set, by default "nocheck parallel=VMATCH_JOBS" (without the package's tests).
deb_build() {
    local t0 type=${1:--b} arch_only=()
    [ "$type" = -B ] && arch_only=(--arch-only)
    log "$port_name: build dependencies (apt-get build-dep${arch_only[*]:+ ${arch_only[*]}})"
    DEBIAN_FRONTEND=noninteractive apt-get build-dep -y -qq "${arch_only[@]}" "$deb_src" >/dev/null
    rm -f "$deb_dir"/*.deb "$deb_dir"/*.changes "$deb_dir"/*.buildinfo
    t0=$(date +%s)
    local opts=${DEB_BUILD_OPTIONS-nocheck parallel=$jobs}
    log "$port_name: dpkg-buildpackage $type, DEB_BUILD_OPTIONS=$opts (log: $deb_dir/build.log)"
    (cd "$deb_src" && DEB_BUILD_OPTIONS=$opts nice -n 19 dpkg-buildpackage "$type" -uc -us) >"$deb_dir/build.log" 2>&1 || {
        grep -E 'error|Error' "$deb_dir/build.log" | tail -20 >&2
        echo "ports/$port/deb: dpkg-buildpackage failed (log: $deb_dir/build.log)" >&2
        return 1
    }
    echo "dpkg-buildpackage $(($(date +%s) - t0))s" | tee "$deb_dir/times"
    ls "$deb_dir"/*.deb
}

# deb_lintian: lintian on the port's packages (the .changes in $deb_dir).  An error or a
# warning passes only when $here/lintian-inherited lists it (package, tag, why) and Debian's
# own binary packages of the same names carry it too: they are fetched (apt-get download,
# Debian's version of each, not a +vmatch one) and linted beside ours, so the list can only
# explain what Debian's packaging already does.  0 when clean so; 1 with the tags that are
# not; 2 without packages, or without lintian and not root.
deb_lintian() {
    local changes list=$here/lintian-inherited tmp pkg ver bad=0 ours stock
    changes=$(find "$deb_dir" -maxdepth 1 -name '*.changes' -print -quit)
    [ -n "$changes" ] || {
        echo "ports/$port/deb lintian: no packages in $deb_dir: run ports/$port/deb first" >&2
        return 2
    }
    vmatch_deps lintian || return 2 # as root it installs lintian; else it says to
    tmp=$(mktemp -d)
    # "PACKAGE TAG" of each error and warning lintian reports on the .debs given
    tags() { lintian --fail-on none --tag-display-limit 0 "$@" 2>/dev/null |
        awk '$1 == "E:" || $1 == "W:" {sub(":", "", $2); print $2, $3}' | sort -u; }
    ours=$(tags "$changes")
    log "$port_name: lintian on $(basename "$changes")"
    for pkg in $(awk '/^Binary:/ {for (i = 2; i <= NF; i++) print $i}' "$changes" | grep -v -- -dbgsym); do
        ver=$(apt-cache madison "$pkg" | awk -F'|' '{gsub(/ /, "", $2)} $2 !~ /vmatch/ && v == "" {v = $2} END {print v}')
        if [ -z "$ver" ] || ! (cd "$tmp" && apt-get download -qq "$pkg=$ver" >/dev/null 2>&1); then
            echo "ports/$port/deb lintian: cannot fetch Debian's $pkg${ver:+ $ver} to compare with" >&2
            rm -rf "$tmp"
            return 2
        fi
    done
    stock=$(tags "$tmp"/*.deb)
    rm -rf "$tmp"
    while read -r pkg tag; do
        [ -n "$pkg" ] || continue
        if ! grep -qE "^$pkg +$tag( |$)" "$list"; then
            echo "   not explained: $pkg: $tag (ports/$port/lintian-inherited)"
            bad=1
        elif ! grep -qx "$pkg $tag" <<<"$stock"; then
            echo "   not Debian's: $pkg: $tag (Debian's own $pkg has no such tag)"
            bad=1
        else
            echo "   inherited: $pkg: $tag, as on Debian's own: $(grep -E "^$pkg +$tag" "$list" | sed -E 's/^[^ ]+ +[^ ]+ +//')"
        fi
    done <<<"$ours"
    [ $bad = 0 ] && echo "   lintian: every error and warning is Debian's packaging's, explained"
    return $bad
}

# ---- what the drop-in tests (ports/*/deb-test) share ----

# deb_ver PACKAGE: its installed version, else nothing (by the status: a package a refused
# dpkg -r left selected for removal still counts).
deb_ver() {
    { dpkg-query -W -f='${db:Status-Status} ${Version}' "$1" 2>/dev/null || true; } |
        awk '$1 == "installed" {print $2}'
}

# deb_vers PACKAGE...: "PACKAGE VERSION, " for each, "absent" for one not installed.
deb_vers() {
    local p v
    for p in "$@"; do
        v=$(deb_ver "$p")
        printf '%s %s, ' "$p" "${v:-absent}"
    done
}

# deb_ok WHAT COMMAND...: "ok: WHAT" when COMMAND succeeds, else "FAILED: WHAT", and
# deb_status becomes 1.
deb_status=0
# shellcheck disable=SC2034 # (the tests read it)
deb_ok() {
    local what=$1
    shift
    if "$@"; then echo "   ok: $what"; else echo "   FAILED: $what"; deb_status=1; fi
}

# deb_stand_in DIR NAME VERSION [PROVIDES]: DIR/NAME.deb, an empty package NAME at VERSION
# standing in for a library of another soname (libvmatch0.99) or of another inline version
# (a libvmatch0.2 of the next inline version, which provides its libvmatch-inline-abiN+1
# and satisfies the shlibs dependency's ">=": only the inline dependency refuses it).
# shellcheck disable=SC2034 # (the tests read them)
deb_stand_in_version=${vmatch_version%+inline*}+inline$((vmatch_inline + 1))-1
# shellcheck disable=SC2034
deb_stand_in_provides=libvmatch-inline-abi$((vmatch_inline + 1))
deb_stand_in() {
    rm -rf "$1/stand-in" && mkdir -p "$1/stand-in/DEBIAN"
    printf '%s\n' "Package: $2" "Version: $3" 'Architecture: all' 'Maintainer: test <t@example.org>' \
        ${4:+"Provides: $4"} "Description: stand-in for a libvmatch the patched packages cannot use" \
        >"$1/stand-in/DEBIAN/control"
    dpkg-deb -b "$1/stand-in" "$1/$2.deb" >/dev/null
}

# deb_refused LOG DEB PACKAGE NEEDED: apt-get install of DEB (PACKAGE's patched version)
# alone fails naming NEEDED in a "Depends:", and PACKAGE stays at the version it had.
deb_refused() {
    local was
    was=$(deb_ver "$3")
    ! apt-get install -y "$2" >"$1" 2>&1 && grep -q "Depends: $4" "$1" && [ "$(deb_ver "$3")" = "$was" ]
}

# deb_kept LOG: dpkg -r of the library package is refused ("dependency problems") while a
# patched package depends on it; dpkg still marks it for removal, so its selection is put
# back.
deb_kept() {
    ! dpkg -r "$vmatch_lib_pkg" >"$1" 2>&1 && grep -q 'dependency problems' "$1" &&
        [ -n "$(deb_ver "$vmatch_lib_pkg")" ] && echo "$vmatch_lib_pkg install" | dpkg --set-selections
}
