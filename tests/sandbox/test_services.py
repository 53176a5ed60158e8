"""Reading the services an agent left running from a snapshot of /proc (`factory.sandbox.services`)."""

import base64

from factory.sandbox.services import Port, listening, read_snapshot


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _proc(pid: int, ppid: int, start: int, argv: list[str], uid: int = 0, cwd: str = "/app", env: str = "A=1",
          sockets: str = "") -> str:
    return f"P {pid} {ppid} {start} {uid} {uid} {_b64(cwd + chr(10))} {_b64(chr(0).join(argv) + chr(0))} {_b64(env)} {sockets}"


TCP = ("  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
       "   0: 0100007F:1F91 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 111 1\n"
       "   1: 0100007F:1F91 0100007F:D1C2 01 00000000:00000000 00:00000000 00000000     0        0 112 1\n")
UDP = ("   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops\n"
       "  5: 00000000:0035 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 222 2 0 0\n")


def test_listening_sockets_are_read_by_their_table():
    assert listening(TCP + UDP) == {111: Port(proto="tcp", number=8081), 222: Port(proto="udp", number=53)}


def test_only_the_roots_of_the_agent_s_process_trees_are_services_in_start_order():
    lines = [
        "I 40 7 9",  # the snapshot itself, the keepalive, the command server
        _proc(1, 0, 1, ["docker-init", "--", "sleep"]),
        _proc(7, 1, 2, ["sleep", "14400"]),
        _proc(9, 0, 3, ["sh", "-c", "server"]),
        _proc(12, 9, 4, ["base64"]),
        _proc(30, 1, 20, ["nginx: master process /usr/sbin/nginx -g daemon"], env="PATH=/bin\0X=a=b"),
        _proc(31, 30, 21, ["nginx: worker process"], sockets="111 "),
        _proc(20, 1, 10, ["python3", "-m", "http.server"], uid=1000, sockets="222 5"),
        _proc(40, 0, 30, ["sh", "-c", "snapshot"]),
        _proc(41, 40, 31, ["ls"]),
        *("N " + line for line in (TCP + UDP).splitlines()),
    ]
    services = read_snapshot("\n".join(lines))
    # nginx's master rewrote its command line into a title: the command is read back out of it
    assert [s.argv for s in services] == [["python3", "-m", "http.server"], ["/usr/sbin/nginx", "-g", "daemon"]]
    web, nginx = services
    assert (web.uid, web.gid, web.cwd, web.ports) == (1000, 1000, "/app", [Port(proto="udp", number=53)])
    assert nginx.env == {"PATH": "/bin", "X": "a=b"} and str(nginx) == "/usr/sbin/nginx -g daemon (port 8081)"


def test_a_garbled_snapshot_gives_no_services_rather_than_an_error():
    assert read_snapshot("P 5 5 x\nP 6 6 1 0 0 !! !! !!\nN garbage\n" + _proc(8, 8, 1, ["loop"])) == []
