#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""meson install --destdir into a temporary directory, then check the list.

test-install.py BUILD_DIR GENERATOR_DIR

TAP output. Every file the service needs must be installed where the build
options say (binaries, units, udev rule, example config, man pages), the
unit must point at the installed daemon, and nothing may land outside the
prefix and the unit/udev/generator directories (GENERATOR_DIR: where
systemd/meson.build put v4l2cuse-generator, systemd's own with --prefix=/usr).
"""
import json
import re
import os
import shutil
import subprocess
import sys
import tempfile

n = 0
failed = 0


def check(ok, desc, detail=None):
    global n, failed
    n += 1
    print("%s %d - %s" % ("ok" if ok else "not ok", n, desc))
    if not ok:
        failed += 1
        if detail:
            for line in str(detail).splitlines():
                print("#   " + line)


def main():
    build = sys.argv[1]
    generatordir = sys.argv[2]
    opts = {o["name"]: o["value"] for o in json.loads(subprocess.check_output(
        ["meson", "introspect", build, "--buildoptions"]))}
    prefix = opts["prefix"]

    def under_prefix(d):
        return d if os.path.isabs(d) else os.path.join(prefix, d)

    unitdir = opts.get("systemdunitdir") or os.path.join(prefix, "lib/systemd/system")
    udevdir = opts.get("udevrulesdir") or os.path.join(prefix, "lib/udev/rules.d")
    sbindir = under_prefix(opts["sbindir"])
    bindir = under_prefix(opts["bindir"])
    libexecdir = under_prefix(opts["libexecdir"])
    mandir = under_prefix(opts["mandir"])
    datadir = under_prefix(opts["datadir"])
    userunitdir = (opts.get("systemduserunitdir") or
                   os.path.join(prefix, "lib/systemd/user"))
    # v4l2cuse-pipewire, its user unit and man page come with -Dpipewire.
    with_pipewire = os.path.isfile(os.path.join(build, "pw-bridge", "v4l2cuse-pipewire"))
    expected = [
        os.path.join(sbindir, "v4l2cuse"),
        os.path.join(bindir, "v4l2cuse-ctl"),
        os.path.join(bindir, "v4l2cuse-run"),
        # usb=true: the daemon starts it from there (config.h V4L2CUSE_USB_PROGRAM).
        os.path.join(libexecdir, "v4l2cuse-usb"),
        os.path.join(unitdir, "v4l2cuse.service"),
        # The unit's network drop-in (daemon/network.h), at boot and daemon-reload.
        os.path.join(generatordir, "v4l2cuse-generator"),
        os.path.join(udevdir, "70-v4l2cuse.rules"),
        os.path.join(datadir, "doc/v4l2cuse/examples/v4l2cuse.conf"),
        os.path.join(mandir, "man8/v4l2cuse.8"),
        os.path.join(mandir, "man5/v4l2cuse.conf.5"),
        os.path.join(mandir, "man1/v4l2cuse-ctl.1"),
        os.path.join(mandir, "man1/v4l2cuse-run.1"),
    ]
    if with_pipewire:
        expected += [
            os.path.join(bindir, "v4l2cuse-pipewire"),
            os.path.join(userunitdir, "v4l2cuse-pipewire.service"),
            os.path.join(mandir, "man1/v4l2cuse-pipewire.1"),
        ]

    dest = tempfile.mkdtemp(prefix="v4l2cuse-install-")
    try:
        r = subprocess.run(["meson", "install", "-C", build, "--destdir", dest,
                            "--no-rebuild", "--quiet"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        check(r.returncode == 0, "meson install --destdir succeeds", r.stdout)
        installed = []
        for root, _dirs, files in os.walk(dest):
            for f in files:
                installed.append("/" + os.path.relpath(os.path.join(root, f), dest))
        print("# %d files installed under %s" % (len(installed), prefix))
        for f in sorted(installed):
            print("#   " + f)
        for path in expected:
            full = dest + path
            ok = os.path.isfile(full)
            if ok and ("/sbin/" in path or "/bin/" in path or path.startswith(generatordir)):
                ok = os.access(full, os.X_OK)
            check(ok, "installed: %s" % path)
        allowed = (prefix.rstrip("/") + "/", unitdir.rstrip("/") + "/", udevdir.rstrip("/") + "/",
                   userunitdir.rstrip("/") + "/", generatordir.rstrip("/") + "/")
        stray = [f for f in installed if not f.startswith(allowed)]
        check(not stray, "nothing outside the prefix, unit, udev and generator directories",
              "\n".join(stray))

        unit_path = dest + os.path.join(unitdir, "v4l2cuse.service")
        unit = open(unit_path).read() if os.path.isfile(unit_path) else ""
        check(not re.search(r"@[a-z_]+@", unit), "the unit has no unsubstituted @placeholders@")
        check("ExecStart=%s\n" % os.path.join(sbindir, "v4l2cuse") in unit,
              "the unit starts the installed daemon")
        check("Type=notify" in unit and "WatchdogSec=" in unit and "DevicePolicy=closed" in unit,
              "the unit is Type=notify, has a watchdog and a closed device policy")
        check("PrivateNetwork=yes\n" in unit and
              "Environment=V4L2CUSE_SERVICE_NETWORK=none\n" in unit,
              "the unit has no network and says so to the daemon (the generator's drop-in opens it)")
        if with_pipewire:
            uunit_path = dest + os.path.join(userunitdir, "v4l2cuse-pipewire.service")
            uunit = open(uunit_path).read() if os.path.isfile(uunit_path) else ""
            check("ExecStart=%s\n" % os.path.join(bindir, "v4l2cuse-pipewire") in uunit and
                  "After=pipewire.service" in uunit and not re.search(r"@[a-z_]+@", uunit),
                  "the user unit starts the installed bridge after pipewire.service")
        example = dest + os.path.join(datadir, "doc/v4l2cuse/examples/v4l2cuse.conf")
        daemon = dest + os.path.join(sbindir, "v4l2cuse")
        if os.path.isfile(example) and os.path.isfile(daemon):
            r = subprocess.run([daemon, "--check-config", "--config", example],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            check(r.returncode == 0, "the installed example passes --check-config", r.stdout)
    finally:
        shutil.rmtree(dest, ignore_errors=True)
    print("1..%d" % n)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
