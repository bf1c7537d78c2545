"""A factory-default CloudEngine switch in DHCP-based ZTP, as a test double: it is not the switch.

It does what Huawei's ZTP documentation says a switch does, so that the network twin can prove the
day-0 path (DHCP through the relay, SFTP through the firewall, the intermediate file, the startup
configuration) with real dnsmasq and sshd; it does not boot, set a startup file or restart, and
whatever the documentation leaves open is marked [unconfirmed] below.

Sources, cited per behaviour as [CE <page>]: CE6800/8800 V300R023C00 configuration guide, Basic
Configuration > ZTP Configuration > Configuring DHCP-based ZTP (Without a Controller):
  [CE Understanding]  "Understanding DHCP-based ZTP Without a Controller", Deployment Process
  [CE DHCP]           "Configuring a DHCP Server", Table 1 (request) and Table 2 (reply options)
  [CE Example]        "Example for Configuring Intermediate File-based ZTP" (the .ini file)
  [CE Files]          "Preparing Deployment Files"
  [CE FileServer]     "Configuring a File Server"

Use: inside the switch's network namespace (entered by `ip netns exec` or setns),
`run(interface, esn, mac)` returns a ZtpResult; the double brings the interface up, and after the
DHCP ACK assigns the leased address and a default route via the lease's router itself with `ip`
(configure=False leaves that to the caller). Every deviation raises ZtpError naming the step.
`python generator/twin/ztp_client.py --interface IF --esn ESN --mac MAC --out FILE` does the same
from a shell and prints the result as JSON (exit status 2 and the error on stderr on failure).
"""

from __future__ import annotations

import argparse
import hashlib
import ipaddress
import json
import random
import re
import socket
import struct
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from urllib.parse import unquote, urlsplit

MAGIC = b"\x63\x82\x53\x63"
DISCOVER, OFFER, REQUEST, ACK, NAK = 1, 2, 3, 5, 6
# Options asked for in option 55: 1 mask, 3 gateway, 6 DNS, 7 syslog, 66 file server, 67 file
# name, 150 TFTP server, 148 syslog port: the options [CE DHCP] Table 2 lists. Which list a real
# switch sends is [unconfirmed]; the role forces 66/67 (dhcp-option-force) either way.
PARAMETERS = bytes([1, 3, 6, 7, 66, 67, 148, 150])
RETRANSMIT = 2.0  # seconds between DHCPDISCOVERs [unconfirmed: the guide gives no interval]


class ZtpError(RuntimeError):
    """One ZTP step failed: .step names it (dhcp, address, intermediate-file, config, ...)."""

    def __init__(self, step: str, message: str) -> None:
        super().__init__(f"ZTP step {step!r}: {message}")
        self.step = step


@dataclass(frozen=True)
class Lease:
    address: str
    netmask: str
    prefix: int
    router: str | None
    server: str  # option 54, the DHCP server's identifier
    relay: str | None  # the source of the ACK when it is not the server (a DHCP relay)
    options: dict[int, bytes] = field(repr=False)

    def text(self, code: int) -> str | None:
        value = self.options.get(code)
        return value.rstrip(b"\0").decode("utf-8", "replace") if value is not None else None


@dataclass(frozen=True)
class ZtpResult:
    lease: Lease
    intermediate_file: str  # its text, as fetched
    config_name: str
    config_bytes: bytes


def huawei_mac(mac: str) -> tuple[bytes, str]:
    """'00e0-fc12-3456', '00:e0:fc:12:34:56' or '00e0fc123456' -> (6 bytes, '00e0-fc12-3456')."""
    digits = re.sub(r"[^0-9a-f]", "", mac.lower())
    if len(digits) != 12:
        raise ZtpError("identity", f"{mac!r} is not a MAC address")
    return bytes.fromhex(digits), "-".join(digits[i : i + 4] for i in range(0, 12, 4))


def client_id(esn: str, mac: str) -> bytes:
    """Option 61: "Client ID, which indicates the ESN and MAC address of a device", example
    "2102354LMB0123456517 00e0-fc12-3456" [CE DHCP] Table 1: the ESN, a space, the MAC in
    Huawei's dotted-quad form, sent as that ASCII string. Whether a real switch puts an RFC 2132
    type byte in front is [unconfirmed]."""
    return f"{esn} {huawei_mac(mac)[1]}".encode()


def _packet(kind: int, xid: int, chaddr: bytes, extra: list[tuple[int, bytes]]) -> bytes:
    # BOOTREQUEST, Ethernet, broadcast flag set: the switch has no address to receive a unicast
    # reply on (RFC 2131 4.1), which is also what makes a relay broadcast the reply back.
    head = struct.pack("!BBBBIHH4s4s4s4s16s", 1, 1, 6, 0, xid, 0, 0x8000, *[bytes(4)] * 4,
                       chaddr.ljust(16, b"\0"))  # fmt: skip
    opts = [(53, bytes([kind])), *extra]
    body = b"".join(bytes([code, len(value)]) + value for code, value in opts)
    return head + bytes(64 + 128) + MAGIC + body + b"\xff"


def _options(data: bytes) -> dict[int, bytes]:
    out: dict[int, bytes] = {}
    at = 240
    while at < len(data):
        code = data[at]
        if code == 255:
            break
        if code == 0:
            at += 1
            continue
        if at + 1 >= len(data) or at + 2 + data[at + 1] > len(data):
            raise ValueError("truncated options")
        out[code] = out.get(code, b"") + data[at + 2 : at + 2 + data[at + 1]]  # RFC 3396
        at += 2 + data[at + 1]
    return out


def _reply(data: bytes, xid: int, chaddr: bytes) -> tuple[int, str, dict[int, bytes]] | None:
    """(message type, yiaddr, options) of a BOOTREPLY for this exchange, else None."""
    if len(data) < 241 or data[0] != 2 or data[236:240] != MAGIC:
        return None
    if struct.unpack("!I", data[4:8])[0] != xid or data[28:34] != chaddr:
        return None
    try:
        opts = _options(data)
    except ValueError:
        return None
    kind = opts.get(53, b"\0")[0]
    return kind, socket.inet_ntoa(data[16:20]), opts


def _socket(interface: str) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_BROADCAST, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, interface.encode())
    sock.bind(("0.0.0.0", 68))
    return sock


def _exchange(sock, packet, xid, chaddr, want, deadline, step):
    """Broadcast packet, retransmitted, until a reply of a type in want arrives."""
    while True:
        now = time.monotonic()
        if now >= deadline:
            raise ZtpError(step, "no answer before the timeout (no DHCP server or relay heard it)")
        sock.sendto(packet, ("255.255.255.255", 67))
        resend = min(deadline, now + RETRANSMIT)
        while (left := resend - time.monotonic()) > 0:
            sock.settimeout(left)
            try:
                data, source = sock.recvfrom(4096)
            except TimeoutError:
                break
            got = _reply(data, xid, chaddr)
            if got and got[0] in want:
                return (*got, source[0])


def dhcp(interface: str, esn: str, mac: str, timeout: float = 10.0, model: str = "CE6866-48S8CQ-P"):
    """DISCOVER/OFFER/REQUEST/ACK on interface [CE Understanding] step 2 ("broadcasts DHCP
    Request packets through its management network interface"); -> Lease."""
    deadline = time.monotonic() + timeout
    chaddr = huawei_mac(mac)[0]
    ident = [
        (61, client_id(esn, mac)),
        # Option 60: "Vendor ID, which indicates the vendor and model", "HUAWEI CE6866-48S8CQ-P"
        (60, f"HUAWEI {model}".encode()),  # [CE DHCP] Table 1
        (55, PARAMETERS),
    ]
    xid = random.getrandbits(32)
    try:
        sock = _socket(interface)
    except OSError as err:
        raise ZtpError("dhcp", f"cannot listen on UDP 68 of {interface}: {err}") from err
    with sock:
        _, offered, opts, _ = _exchange(
            sock=sock,
            packet=_packet(DISCOVER, xid, chaddr, ident),
            xid=xid,
            chaddr=chaddr,
            want={OFFER},
            deadline=deadline,
            step="dhcp-offer",
        )
        if 54 not in opts:
            raise ZtpError("dhcp-offer", "the offer has no server identifier (option 54)")
        request = [(50, socket.inet_aton(offered)), (54, opts[54]), *ident]
        kind, address, opts, source = _exchange(
            sock=sock,
            packet=_packet(REQUEST, xid, chaddr, request),
            xid=xid,
            chaddr=chaddr,
            want={ACK, NAK},
            deadline=deadline,
            step="dhcp-ack",
        )
    if kind == NAK:
        raise ZtpError("dhcp-ack", f"the server refused {offered}: {opts.get(56, b'').decode()}")
    # Options 1 and 3 are mandatory [CE DHCP] Table 2.
    for code, name in ((1, "subnet mask"), (3, "gateway")):
        if len(opts.get(code, b"")) < 4:
            raise ZtpError("dhcp-ack", f"option {code} ({name}) missing, mandatory in the CE guide")
    netmask = socket.inet_ntoa(opts[1][:4])
    server = socket.inet_ntoa(opts[54][:4]) if 54 in opts else source
    return Lease(
        address=address,
        netmask=netmask,
        prefix=ipaddress.IPv4Network(f"0.0.0.0/{netmask}").prefixlen,
        router=socket.inet_ntoa(opts[3][:4]),
        server=server,
        relay=source if source != server else None,
        options=opts,
    )


def _ip(*args: str) -> None:
    res = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=10)
    if res.returncode:
        raise ZtpError("address", f"ip {' '.join(args)}: {res.stderr.strip()}")


def configure(interface: str, lease: Lease) -> None:
    """The leased address and a default route via the router, as the switch then uses them to
    reach the file server [CE Understanding] step 4."""
    _ip("addr", "replace", f"{lease.address}/{lease.prefix}", "dev", interface)
    if lease.router and lease.router != lease.address:
        _ip("route", "replace", "default", "via", lease.router, "dev", interface)


def intermediate_url(lease: Lease) -> str:
    """Option 67 is the file name, optionally with the server ("sftp://user:pw@host/ztp.ini");
    without a host, the server is option 66 (sftp://username:password@hostname:port) or, for
    TFTP only, option 150; "If both Option 66 and Option 150 are configured, the Option 66 field
    is preferentially parsed" [CE DHCP] Table 2."""
    name = lease.text(67)
    if not name:
        raise ZtpError("dhcp-options", "no option 67 (intermediate file name), mandatory")
    if "://" in name:
        return name
    server = lease.text(66)
    if not server and 150 in lease.options:
        server = "tftp://" + socket.inet_ntoa(lease.options[150][:4])
    if not server:
        raise ZtpError("dhcp-options", f"option 67 {name!r} has no host and there is no option 66")
    if "://" not in server:
        raise ZtpError(
            "dhcp-options", f"option 66 {server!r} is not a URL (a bare IP is option 150)"
        )
    return f"{server.rstrip('/')}/{name.lstrip('/')}"


def sftp_get(url: str, interface: str | None, timeout: float, step: str) -> bytes:
    """One file by SFTP (paramiko): the only protocol this double implements, the one the CE
    guide recommends ([CE DHCP] Table 2, [CE FileServer]). The server's host key is accepted
    unseen, as a factory switch has none to compare [unconfirmed]."""
    import paramiko  # a test dependency (pyproject [test]), only needed here

    parts = urlsplit(url)
    if parts.scheme != "sftp":
        raise ZtpError(step, f"{url.split('@')[-1]!r}: only sftp:// is implemented by this double")
    if not parts.hostname or not parts.username:
        raise ZtpError(step, f"{parts.hostname!r}: the URL needs sftp://user:password@host")
    try:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if interface:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, interface.encode())
        sock.settimeout(timeout)
        sock.connect((parts.hostname, parts.port or 22))
    except OSError as err:
        sock.close()
        raise ZtpError(step, f"cannot reach {parts.hostname}:{parts.port or 22}: {err}") from err
    transport = paramiko.Transport(sock)
    transport.banner_timeout = transport.auth_timeout = timeout
    try:
        transport.start_client(timeout=timeout)
        transport.auth_password(unquote(parts.username), unquote(parts.password or ""))
        sftp = paramiko.SFTPClient.from_transport(transport)
        sftp.get_channel().settimeout(timeout)
        with sftp.open(unquote(parts.path) or "/", "rb") as fh:
            return fh.read()
    except (paramiko.SSHException, OSError, EOFError) as err:
        who = f"{parts.username}@{parts.hostname}"
        raise ZtpError(step, f"SFTP {who} {parts.path!r}: {type(err).__name__}: {err}") from err
    finally:
        transport.close()
        sock.close()


# Every field of [CE Example]'s intermediate file, "_n" for the numbered ones; one beyond them
# (SHA256_n: the role's opt-in, [unconfirmed] on a CE) is read only when asked (`beyond`).
EXAMPLE = {"*FILESERVER", "*TIME_SN", "*DEVICE_TYPE_NUM", "SET_MASTER", "CLEAR_MASTER", "EXPORTCFG",
           "DEVICE_TYPE", "ESN", "MAC", "VRPVER", "SYSLOG_INFO", "SPACE_CLEAR", "DIRECTORY",
           "ACTIVE_DELAYTIME", "ACTIVE_INTIME", "*FILETYPENUM", "*FILENAME_n", "*TYPE_n",
           "*EFFECTIVE_MODE_n"}  # fmt: skip


def parse_intermediate(text: str, beyond: bool = False) -> tuple[dict, list[dict[str, str]]]:
    """The CE .ini intermediate file [CE Example] (Configuration Scripts > Intermediate file):
    ;BEGIN ZTP CONFIG, [GLOBAL CONFIG] with *FILESERVER, *TIME_SN, *DEVICE_TYPE_NUM, then
    [DEVICE_TYPE_n DESCRIPTION] sections, ;END ZTP CONFIG. -> (global fields, device sections)."""
    lines = [line.strip() for line in text.replace("\r\n", "\n").split("\n")]
    lines = [line for line in lines if line]
    if not lines or lines[0] != ";BEGIN ZTP CONFIG" or lines[-1] != ";END ZTP CONFIG":
        raise ZtpError(
            "intermediate-file", "not the CE form (;BEGIN ZTP CONFIG ... ;END ZTP CONFIG)"
        )
    sections: list[tuple[str, dict[str, str]]] = []
    for line in lines[1:-1]:
        if line.startswith("["):
            sections.append((line, {}))
        elif "=" in line and sections:
            key, value = line.split("=", 1)
            sections[-1][1][key.strip()] = value.strip()
        else:
            raise ZtpError("intermediate-file", f"unexpected line {line!r}")
    if not sections or sections[0][0] != "[GLOBAL CONFIG]":
        raise ZtpError("intermediate-file", "[GLOBAL CONFIG] must come first")
    glob = sections[0][1]
    for key in ("*FILESERVER", "*TIME_SN", "*DEVICE_TYPE_NUM"):  # '*': mandatory in the example
        if not glob.get(key):
            raise ZtpError("intermediate-file", f"[GLOBAL CONFIG] has no {key}")
    try:  # a time, yyyymmddhhmmss: 20200526120159 [CE Example]
        time.strptime(glob["*TIME_SN"] if len(glob["*TIME_SN"]) == 14 else "", "%Y%m%d%H%M%S")
    except ValueError:
        raise ZtpError(
            "intermediate-file", f"*TIME_SN={glob['*TIME_SN']}: no yyyymmddhhmmss"
        ) from None
    devices = []
    for n, (head, fields) in enumerate(sections[1:], 1):
        if head != f"[DEVICE_TYPE_{n} DESCRIPTION]":
            raise ZtpError("intermediate-file", f"section {head!r}, expected DEVICE_TYPE_{n}")
        devices.append(fields)
    extra = {re.sub(r"_\d+$", "_n", k) for f in [glob, *devices] for k in f} - EXAMPLE
    if extra and not beyond:
        raise ZtpError("intermediate-file", f"{sorted(extra)}: no field of the CE example")
    if glob["*DEVICE_TYPE_NUM"] != str(len(devices)):
        raise ZtpError(
            "intermediate-file",
            f"*DEVICE_TYPE_NUM={glob['*DEVICE_TYPE_NUM']} but {len(devices)} device sections",
        )
    return glob, devices


def own_entry(devices: list[dict[str, str]], esn: str, mac: str) -> dict[str, str]:
    """The first section whose ESN or MAC is this switch's ([CE Example] names devices by ESN;
    matching an empty field as a wildcard, or the MAC's accepted spellings, is [unconfirmed])."""
    ours = huawei_mac(mac)[1]
    for fields in devices:
        their_mac = fields.get("MAC", "")
        if fields.get("ESN", "").upper() == esn.upper() or (
            their_mac and huawei_mac(their_mac)[1] == ours
        ):
            return fields
    raise ZtpError(
        "intermediate-file", f"no [DEVICE_TYPE_n DESCRIPTION] for ESN {esn} / MAC {ours}"
    )


def config_file(fields: dict[str, str], require_sha256: bool) -> tuple[str, str | None]:
    """(name, sha256 or None) of the entry's CFG file: *FILETYPENUM files, each *FILENAME_i with
    *TYPE_i (SOFTWARE, CFG, ...) and *EFFECTIVE_MODE_i [CE Example]; the name is "5 to 64
    characters and suffixed with *.zip or *.cfg" [CE Files]. SHA256_i: see the role's
    templates/ztp.ini.j2 ([unconfirmed] for CE)."""
    try:
        count = int(fields.get("*FILETYPENUM", ""))
    except ValueError:
        raise ZtpError("intermediate-file", "*FILETYPENUM is not a number") from None
    cfgs = [i for i in range(1, count + 1) if fields.get(f"*TYPE_{i}") == "CFG"]
    if len(cfgs) != 1:
        raise ZtpError("intermediate-file", f"{len(cfgs)} files of *TYPE_i=CFG, expected one")
    (i,) = cfgs
    name = fields.get(f"*FILENAME_{i}", "")
    if not (5 <= len(name) <= 64 and name.endswith((".cfg", ".zip"))) or "/" in name:
        raise ZtpError("intermediate-file", f"*FILENAME_{i}={name!r}: 5-64 characters, .cfg/.zip")
    if fields.get(f"*EFFECTIVE_MODE_{i}") is None:
        raise ZtpError("intermediate-file", f"no *EFFECTIVE_MODE_{i}")
    digest = fields.get(f"SHA256_{i}") or None
    if digest is None and require_sha256:
        raise ZtpError("intermediate-file", f"no SHA256_{i} for {name}")
    return name, digest


def run(
    interface: str,
    esn: str,
    mac: str,
    timeout: float = 10.0,
    *,
    configure_address: bool = True,
    require_sha256: bool = False,
    beyond: bool = False,
) -> ZtpResult:
    """The whole ZTP file path of one switch: DHCP, intermediate file, startup configuration."""
    deadline = time.monotonic() + timeout
    _ip("link", "set", "dev", interface, "up")
    lease = dhcp(interface, esn, mac, timeout)
    if configure_address:
        configure(interface, lease)
    left = lambda: max(0.5, deadline - time.monotonic())  # noqa: E731
    url = intermediate_url(lease)
    ini = sftp_get(url, interface, left(), "intermediate-file-fetch").decode("utf-8", "replace")
    glob, devices = parse_intermediate(ini, beyond)
    name, digest = config_file(own_entry(devices, esn, mac), require_sha256)
    # "downloads deployment files based on the deployment file server address and deployment
    # file names contained in the intermediate file" [CE Understanding] step 4
    data = sftp_get(f"{glob['*FILESERVER'].rstrip('/')}/{name}", interface, left(), "config-fetch")
    if digest is not None and hashlib.sha256(data).hexdigest() != digest.lower():
        raise ZtpError(
            "config-sha256",
            f"{name}: sha256 {hashlib.sha256(data).hexdigest()}, the intermediate file says {digest}",
        )
    return ZtpResult(lease, ini, name, data)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--interface", required=True)
    ap.add_argument("--esn", required=True)
    ap.add_argument("--mac", required=True)
    ap.add_argument("--timeout", type=float, default=10.0)
    ap.add_argument("--out", help="write the startup configuration here")
    ap.add_argument("--no-configure", action="store_true", help="do not assign the lease")
    ap.add_argument("--beyond-example", action="store_true",
                    help="read fields beyond the CE example (SHA256_n) instead of refusing them")  # fmt: skip
    args = ap.parse_args(argv)
    try:
        res = run(args.interface, args.esn, args.mac, args.timeout,
                  configure_address=not args.no_configure, beyond=args.beyond_example)  # fmt: skip
    except ZtpError as err:
        print(json.dumps({"error": str(err), "step": err.step}), file=sys.stderr)
        return 2
    if args.out:
        with open(args.out, "wb") as fh:
            fh.write(res.config_bytes)
    lease = {k: v for k, v in asdict(res.lease).items() if k != "options"}
    lease["options"] = {str(k): v.hex() for k, v in res.lease.options.items()}
    print(json.dumps({"lease": lease, "config_name": res.config_name,
                      "config_sha256": hashlib.sha256(res.config_bytes).hexdigest()}))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
