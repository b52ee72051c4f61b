"""Run by test_wyoming_zeroconf.py inside a private network namespace (root): starts voxserve
with Wyoming on, browses for `_wyoming._tcp.local.` with python3-zeroconf (the library Home
Assistant itself discovers with), connects the Wyoming reference client to what it found, asks
it to describe itself and to speak, stops the server and waits for the service's withdrawal.
Prints what happened as one JSON object; the test asserts on it."""
import argparse
import asyncio
import json
import socket
import threading

from zeroconf import ServiceBrowser, ServiceStateChange, Zeroconf

import wyoming_support
from wyoming_support import reference, start_wyoming_server

SERVICE = "_wyoming._tcp.local."


class Browser:
    """Services of SERVICE as they come and go, resolved to addresses and a port."""

    def __init__(self):
        self.zeroconf = Zeroconf()
        self.found = {}
        self.added = threading.Event()
        self.removed = threading.Event()
        ServiceBrowser(self.zeroconf, SERVICE, handlers=[self.on_change])

    def on_change(self, zeroconf, service_type, name, state_change):
        if state_change is ServiceStateChange.Added:
            info = zeroconf.get_service_info(service_type, name, timeout=5000)
            if info is not None:
                self.found[name] = {"name": name, "port": info.port,
                                    "addresses": [socket.inet_ntoa(a) for a in info.addresses
                                                  if len(a) == 4]}
                self.added.set()
        elif state_change is ServiceStateChange.Removed:
            self.removed.set()


async def speak(host, port):
    wy = reference()
    async with wy.client.AsyncTcpClient(host, port) as connection:
        await connection.write_event(wy.info.Describe().event())
        info = wy.info.Info.from_event(await wyoming_support.read_until(connection, {"info"}))
        await connection.write_event(wy.tts.Synthesize(text="Found you on the network.").event())
        events = []
        await wyoming_support.read_until(connection, {"audio-stop", "error"}, events)
    return {"tts": [program.name for program in info.tts],
            "audio_bytes": sum(len(e.payload or b"") for e in events if e.type == "audio-chunk")}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--voxserve", required=True)
    parser.add_argument("--wait", type=float, default=30, help="seconds to wait for the service")
    args, server_args = parser.parse_known_args()
    browser = Browser()
    listen = [] if "--wyoming-host" in server_args else ["--wyoming-host", "0.0.0.0"]
    server = start_wyoming_server(args.voxserve, *listen, *server_args)
    result = {"wyoming_port": server.wyoming_port}
    try:
        if browser.added.wait(args.wait):
            (service,) = browser.found.values()
            result["service"] = service
            result["spoken"] = asyncio.run(speak(service["addresses"][0], service["port"]))
    finally:
        result["exit_code"] = server.stop()
        result["log"] = server.log()[-4000:]
    if "service" in result:
        result["withdrawn"] = browser.removed.wait(args.wait)
    browser.zeroconf.close()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
