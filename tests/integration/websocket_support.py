"""Our WebSocket speech stream (/v1/audio/speech/stream, docs/websocket.md) driven the way the
tests need it most: a config message, text pieces, close, then every audio byte until the stream
ends. Shared by the SSML, dictionary and streamed-SSML tests."""
import base64
import json

import websockets


async def speak_over_websocket(server, config, pieces, query=""):
    """The PCM (or other format's bytes) the stream sent, and its last event ("done" or
    "error"); None as the event when the server closed without one. `query`: the URL's, with
    its "?"."""
    url = server.url.replace("http", "ws") + "/v1/audio/speech/stream" + query
    audio = b""
    async with websockets.connect(url, max_size=None) as ws:
        await ws.send(json.dumps(config))
        for piece in pieces:
            await ws.send(json.dumps({"text": piece}))
        await ws.send(json.dumps({"close": True}))
        async for message in ws:
            if isinstance(message, bytes):
                audio += message
                continue
            event = json.loads(message)
            if event.get("type") == "audio":
                audio += base64.b64decode(event["audio"])
            if event.get("type") in ("done", "error"):
                return audio, event
    return audio, None
