"""SSML (docs/ssml.md) through the real binary with its default espeak-ng model: what each
element does to the audio (measured in the PCM), the detection rule and input_format on every
JSON API, gRPC and the WebSocket stream, ElevenLabs' enable_ssml_parsing, word timings across a
<break>, and the 400s for malformed, hostile and unsupported documents."""
import asyncio
import json
import time

import numpy as np
import pytest
import requests

from audio_check import decode
from grpc_support import channel, stubs
from websocket_support import speak_over_websocket

SILENT = 1e-3  # |sample| below this is silence (espeak-ng's speech peaks near 0.3 and above)


def speech(server, text, route="/v1/audio/speech", **fields):
    field = "input" if route == "/v1/audio/speech" else "text"
    body = {"model": "tts-1", field: text, "voice": "en-us", "response_format": "wav"}
    body.update(fields)
    return requests.post(server.url + route, json=body, timeout=60)


def audio_of(server, text, **fields):
    response = speech(server, text, **fields)
    assert response.status_code == 200, response.text
    return decode(response.content, "wav")


def error_of(response, status=400):
    assert response.status_code == status, response.text
    return response.json()["error"]


def longest_silence(samples, rate):
    longest = run = 0
    for quiet in np.abs(samples) < SILENT:
        run = run + 1 if quiet else 0
        longest = max(longest, run)
    return longest / rate


def rms(samples):
    return float(np.sqrt(np.mean(np.square(samples.astype(np.float64)))))


def test_a_two_second_break_adds_two_seconds_of_silence(server):
    plain = audio_of(server, "One. Two.")
    ssml = audio_of(server, '<speak>One. <break time="2s"/> Two.</speak>')
    assert ssml.duration - plain.duration == pytest.approx(2.0, abs=0.01)
    assert longest_silence(ssml.samples, ssml.sample_rate) >= 2.0
    assert longest_silence(plain.samples, plain.sample_rate) < 1.0


def test_prosody_rate_half_makes_the_speech_twice_as_long(server):
    text = "These words are spoken at half the usual rate."
    plain = audio_of(server, text)
    slow = audio_of(server, f'<speak><prosody rate="50%">{text}</prosody></speak>')
    assert slow.duration / plain.duration == pytest.approx(2.0, rel=0.15)


def test_volume_minus_six_decibels_halves_the_rms(server):
    text = "The same sentence, softer."
    plain = audio_of(server, text)
    soft = audio_of(server, f'<speak><prosody volume="-6dB">{text}</prosody></speak>')
    assert len(soft.samples) == len(plain.samples)
    assert rms(soft.samples) / rms(plain.samples) == pytest.approx(10 ** (-6 / 20), abs=0.01)


def test_pitch_changes_the_audio_on_espeak(server):
    text = "A higher voice."
    plain = speech(server, text)
    high = speech(server, f'<speak><prosody pitch="x-high">{text}</prosody></speak>')
    assert plain.status_code == 200 and high.status_code == 200
    assert plain.content != high.content


def test_say_as_characters_spells_the_word_out(server):
    word = audio_of(server, "<speak>cat</speak>")
    spelled = audio_of(server, '<speak><say-as interpret-as="characters">cat</say-as></speak>')
    assert spelled.duration > word.duration * 1.3


def test_sub_alias_speaks_exactly_the_alias(server):
    ssml = speech(server, '<speak><sub alias="World Wide Web">WWW</sub>.</speak>')
    plain = speech(server, "World Wide Web.")
    assert ssml.status_code == 200, ssml.text
    assert ssml.content == plain.content


def test_unknown_elements_are_ignored_and_their_text_spoken(server):
    ssml = speech(server, "<speak><mark name='x'/><foo bar='1'>Hello</foo> there.</speak>")
    plain = speech(server, "Hello there.")
    assert ssml.status_code == 200, ssml.text
    assert ssml.content == plain.content


def test_voice_switches_for_its_part(server):
    ssml = audio_of(server, '<speak>Hello. <voice name="en-gb+m3">Hello.</voice></speak>')
    first = audio_of(server, "Hello.")
    second = audio_of(server, "Hello.", voice="en-gb+m3")
    assert ssml.sample_rate == first.sample_rate == second.sample_rate
    assert np.array_equal(ssml.samples, np.concatenate([first.samples, second.samples]))
    assert not np.array_equal(first.samples, second.samples)


def test_an_unknown_voice_is_a_400_naming_it(server):
    error = error_of(speech(server, '<speak><voice name="xx-nobody">Hi.</voice></speak>'))
    assert error["code"] == "voice_not_found"
    assert "xx-nobody" in error["message"]


def test_phoneme_on_espeak_is_refused_naming_the_element_and_engine(server):
    error = error_of(speech(
        server, '<speak><phoneme alphabet="ipa" ph="təˈmɑːtoʊ">tomato</phoneme></speak>'))
    assert error["code"] == "ssml_unsupported"
    assert "phoneme" in error["message"] and "espeak" in error["message"]


def test_malformed_ssml_is_a_400_with_line_and_column(server):
    error = error_of(speech(server, "<speak>\n  Hello <break time='1s'>\n</speak>"))
    assert error["code"] == "invalid_ssml"
    assert "line 3" in error["message"] and "column" in error["message"], error


@pytest.mark.parametrize("document", [
    '<?xml version="1.0"?><!DOCTYPE speak [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;'
    '&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]><speak>&c;&c;&c;</speak>',
    '<!DOCTYPE speak SYSTEM "file:///etc/passwd"><speak>x</speak>',
    "<speak>" + "<s>" * 500 + "deep" + "</s>" * 500 + "</speak>",
], ids=["entity-bomb", "external-dtd", "deep-nesting"])
def test_hostile_documents_are_refused_quickly(server, document):
    started = time.monotonic()
    error = error_of(speech(server, document, input_format="ssml"))
    assert time.monotonic() - started < 2
    assert error["code"] in ("invalid_ssml", "input_too_long", "payload_too_large"), error


def test_input_format_text_speaks_markup_as_text_and_ssml_takes_fragments(server):
    markup = '<speak>Hi <break time="1s"/> there.</speak>'
    as_text = speech(server, markup, input_format="text")
    assert as_text.status_code == 200, as_text.text
    as_ssml = speech(server, markup)
    assert as_text.content != as_ssml.content
    fragment = speech(server, 'Hi <break time="1s"/> there.', input_format="ssml")
    assert fragment.content == as_ssml.content
    assert error_of(speech(server, "Hi.", input_format="xml"))["code"] == "invalid_input_format"


@pytest.mark.parametrize("route", ["/v1/synthesize", "/tts"])
def test_the_other_json_routes_take_ssml(server, route):
    response = speech(server, 'Hi <break time="1s"/> there.', route=route, input_format="ssml")
    # A whole file, as those routes answer by default (the OpenAI route streams).
    reference = speech(server, '<speak>Hi <break time="1s"/> there.</speak>', stream=False)
    assert response.status_code == 200, response.text
    assert response.content == reference.content
    assert error_of(speech(server, "<speak>Hi", route=route))["code"] == "invalid_ssml"


def test_word_timings_move_by_the_break(server):
    def words(text):
        response = speech(server, text, timestamps="word")
        assert response.status_code == 200, response.text
        return {w["word"]: w for w in response.json()["timestamps"]}

    plain = words("Hello there. General Kenobi.")
    ssml = words('<speak>Hello there. <break time="1500ms"/> General Kenobi.</speak>')
    assert ssml["Hello"]["start_time"] == pytest.approx(plain["Hello"]["start_time"], abs=1e-3)
    assert ssml["General"]["start_time"] - plain["General"]["start_time"] == \
        pytest.approx(1.5, abs=1e-3)
    assert ssml["Kenobi"]["end_time"] - plain["Kenobi"]["end_time"] == pytest.approx(1.5, abs=1e-3)


def elevenlabs(server, text, **body):
    return requests.post(f"{server.url}/elevenlabs/v1/text-to-speech/en-us",
                         params={"output_format": "pcm_22050"},
                         json={"text": text, "model_id": "eleven_multilingual_v2", **body},
                         timeout=60)


def test_elevenlabs_enable_ssml_parsing(server):
    fragment = 'Hello. <break time="1s"/> There.'
    parsed = elevenlabs(server, fragment, enable_ssml_parsing=True)
    plain = elevenlabs(server, "Hello. There.")  # the same two sentences, without the pause
    assert parsed.status_code == 200 and plain.status_code == 200, parsed.text
    seconds = (len(parsed.content) - len(plain.content)) / 2 / 22050
    assert seconds == pytest.approx(1.0, abs=0.02)
    # Without the switch a fragment is text; a whole <speak> document is SSML either way.
    assert elevenlabs(server, fragment).content != parsed.content
    assert elevenlabs(server, f"<speak>{fragment}</speak>").content == parsed.content
    bad = elevenlabs(server, "<speak>Hello", enable_ssml_parsing=True)
    assert bad.status_code == 400, bad.text
    assert "invalid_ssml" in bad.text


def test_grpc_input_format(server):
    pb = stubs().pb
    with channel(server) as ch:
        stub = stubs().rpc.TextToSpeechStub(ch)

        def synthesize(text, **fields):
            return stub.Synthesize(pb.SynthesizeRequest(
                text=text, options=pb.SynthesisOptions(voice="en-us", **fields)), timeout=60)

        ssml = synthesize('Hi <break time="1s"/> there.', input_format="ssml")
        detected = synthesize('<speak>Hi <break time="1s"/> there.</speak>')
        assert ssml.audio == detected.audio
        plain = synthesize("Hi. There.")  # the same two sentences, without the pause
        ssml = synthesize('Hi. <break time="1s"/> There.', input_format="ssml")
        assert ssml.usage.audio_seconds - plain.usage.audio_seconds == pytest.approx(1.0, abs=0.01)
        with pytest.raises(Exception) as failure:
            synthesize("<speak>Hi", input_format="ssml")
        assert "line 1" in str(failure.value)


def test_websocket_stream_in_ssml_speaks_the_document_at_flush(server):
    def stream(config, pieces):
        return speak_over_websocket(server, config, pieces)

    config = {"voice": "en-us", "response_format": "pcm", "input_format": "ssml"}
    audio, end = asyncio.run(stream(config, ["Hi. <break ", 'time="1s"/> The', "re."]))
    assert end["type"] == "done", end
    plain, _ = asyncio.run(stream({"voice": "en-us", "response_format": "pcm"}, ["Hi. There."]))
    assert (len(audio) - len(plain)) / 2 / 24000 == pytest.approx(1.0, abs=0.02)
    _, failed = asyncio.run(stream(config, ["<speak>Hi"]))
    assert failed["type"] == "error" and "invalid_ssml" in json.dumps(failed), failed


def test_worker_processes_speak_ssml_as_the_server_does(server, make_server, tmp_path):
    # Pitch and rate cross the worker protocol with each segment (isolation: process).
    config = tmp_path / "process.yaml"
    config.write_text("models:\n  - id: espeak\n    engine: espeak\n"
                      "    scheduling:\n      isolation: process\n      instances: 1\n")
    workers = make_server("--config", str(config))
    document = ('<speak>Low <prosody pitch="x-low" rate="150%">and fast</prosody> '
                '<break time="300ms"/> then <prosody pitch="x-high">high</prosody>.</speak>')
    in_process = speech(server, document)
    in_workers = speech(workers, document)
    assert in_process.status_code == 200 and in_workers.status_code == 200, in_workers.text
    assert in_workers.content == in_process.content
    assert in_workers.content != speech(server, "Low and fast then high.").content
