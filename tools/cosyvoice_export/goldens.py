"""Per-stage golden tensors: the inputs and outputs of each pipeline stage for one prompt recording
and two short texts. The frontend features come from features.py (our torch re-implementation of
upstream's feature steps, not upstream's frontend.py: that one is the oracle of
tests/integration/test_onnx_cosyvoice_frontend_oracle.py); the LLM runs through upstream's
Qwen2LM/Qwen2Encoder on the Qwen2 stand-in, flow and HiFT are upstream's modules as is.
Written as goldens/<stage>/<tensor>.npy plus goldens/index.json (docs/cosyvoice-bundle.md)."""
import json
import os
import subprocess
import tempfile

import numpy as np
import torch

import features
import tokenizer_files

PROMPT_TEXT = "This is a short prompt recording."
TEXTS = ["Hello world.", "Good morning, how are you?"]


class Writer:
    def __init__(self, bundle):
        self.bundle = bundle
        self.stages = []

    def stage(self, name, inputs, outputs, atol, note=""):
        entry = {"name": name, "inputs": {}, "outputs": {}, "atol": atol}
        if note:
            entry["note"] = note
        for kind, tensors in (("inputs", inputs), ("outputs", outputs)):
            for key, value in tensors.items():
                rel = f"goldens/{name}/{key}.npy"
                os.makedirs(os.path.dirname(os.path.join(self.bundle, rel)), exist_ok=True)
                array = value.detach().numpy() if isinstance(value, torch.Tensor) else value
                if array.dtype == np.float64:
                    array = array.astype(np.float32)
                np.save(os.path.join(self.bundle, rel), np.ascontiguousarray(array))
                entry[kind][key] = rel
        self.stages.append(entry)

    def finish(self, extra):
        with open(os.path.join(self.bundle, "goldens", "index.json"), "w") as f:
            json.dump({"format_version": 1, **extra, "stages": self.stages}, f, indent=1)


def prompt_recording(path):
    """A prompt made with espeak-ng (22.05 kHz mono 16-bit), as a user's upload would be."""
    subprocess.run(["espeak-ng", "-v", "en-us", "-w", path, PROMPT_TEXT], check=True)
    return path


@torch.no_grad()
def write(bundle, llm, flow, hift, campplus, tokenizer, seed=0):
    """campplus/tokenizer: torch modules with the ONNX files' weights, or None to skip them
    (a real export without Python onnxruntime has only the upstream .onnx files)."""
    torch.manual_seed(seed)
    w = Writer(bundle)
    os.makedirs(os.path.join(bundle, "goldens"), exist_ok=True)
    embedding, prompt_tokens, prompt_mel = _prompt_frontend(w, bundle, campplus, tokenizer, 8000.0)

    prompt_ids = torch.tensor(tokenizer_files.encode(PROMPT_TEXT), dtype=torch.int32)
    w.stage("text.tokens/prompt", {}, {"ids": prompt_ids}, 0.0, PROMPT_TEXT)
    for n, text in enumerate(TEXTS):
        ids = torch.tensor(tokenizer_files.encode(text), dtype=torch.int32)
        w.stage(f"text.tokens/{n}", {}, {"ids": ids}, 0.0, text)
        _llm(w, n, llm, prompt_ids, ids, prompt_tokens)
        _llm_greedy(w, n, llm, prompt_ids, ids, prompt_tokens)
        speech = torch.randint(0, 6561, (2 * len(ids),), dtype=torch.int32)
        mel_out = _flow(w, n, flow, prompt_tokens, speech, prompt_mel, embedding)
        _hift(w, n, hift, mel_out)
    flow_stream(w, flow, prompt_tokens, prompt_mel, embedding)
    _llm_ras(w, llm)
    w.finish({"prompt_wav": "goldens/prompt.wav", "prompt_text": PROMPT_TEXT, "texts": TEXTS})


def _prompt_frontend(w, bundle, campplus, tokenizer, fmax):
    """The audio frontend's stages on an espeak-ng prompt (goldens/prompt.wav): decode and
    resample, fbank, Whisper log-mel, the prompt mel (fmax: 8 kHz for CosyVoice2, the Nyquist rate
    for CosyVoice3: feat_extractor in their yamls), CAM++, the speech tokenizer, the 2:1
    alignment. Returns the profile it makes: embedding, prompt tokens, prompt mel."""
    wav_path = prompt_recording(os.path.join(bundle, "goldens", "prompt.wav"))
    import soundfile  # here, not at the top: an export with --no-goldens runs where it is missing

    data, rate = soundfile.read(wav_path, dtype="float32")
    wav = torch.from_numpy(data)
    wav16 = features.resample(wav, rate, 16000)
    wav24 = features.resample(wav, rate, 24000)
    # Resampling is torchaudio's here and soxr's in voxserve: their filters differ near Nyquist,
    # so verify-bundle reports the RMS difference of the two for these stages (5e-3 bounds what
    # docs/cosyvoice-frontend.md measured on speech; the features stages below start from these
    # goldens and are compared element by element).
    w.stage("audio.decode_16k", {}, {"wav": wav16}, 5e-3, "goldens/prompt.wav -> 16 kHz mono (RMS)")
    w.stage("audio.decode_24k", {}, {"wav": wav24}, 5e-3, "goldens/prompt.wav -> 24 kHz mono (RMS)")
    fbank = features.kaldi_fbank(wav16)
    w.stage("audio.fbank", {"wav": wav16}, {"fbank": fbank}, 1e-3)
    logmel = features.whisper_log_mel(wav16)
    w.stage("audio.whisper_logmel", {"wav": wav16}, {"logmel": logmel}, 1e-3)
    mel = features.prompt_mel(wav24, fmax=fmax)
    w.stage("audio.prompt_mel", {"wav": wav24}, {"mel": mel}, 1e-3)

    if campplus is not None:
        embedding = campplus(fbank.unsqueeze(0))[0]
        w.stage("campplus", {"fbank": fbank}, {"embedding": embedding}, 1e-4)
    else:
        embedding = torch.randn(192)
    if tokenizer is not None:
        tokens = tokenizer(logmel.unsqueeze(0), torch.tensor([logmel.shape[1]], dtype=torch.int32))
        tokens = tokens[0].to(torch.int32)
        w.stage("speech_tokenizer", {"logmel": logmel}, {"tokens": tokens}, 0.0)
    else:
        tokens = torch.randint(0, 6561, (logmel.shape[1] // 4,), dtype=torch.int32)
    # The 2:1 alignment of prompt mel and tokens (cosyvoice/cli/frontend.py, zero-shot).
    token_len = min(mel.shape[0] // 2, tokens.shape[0])
    prompt_mel, prompt_tokens = mel[:2 * token_len], tokens[:token_len]
    w.stage("frontend.align", {"mel": mel, "tokens": tokens},
            {"prompt_mel": prompt_mel, "prompt_tokens": prompt_tokens}, 0.0)
    return embedding, prompt_tokens, prompt_mel


def _llm(w, n, llm, prompt_ids, ids, prompt_tokens):
    """Prefill and one decode step as Qwen2LM.inference does them (cosyvoice/llm/llm.py:473-545)."""
    text = torch.cat([prompt_ids, ids]).to(torch.int64).unsqueeze(0)
    text_emb = llm.llm.model.model.embed_tokens(text)
    # CosyVoice3LM has no llm_embedding: its sos and task_id are speech_embedding rows (:482-484).
    specials = llm.llm_embedding if hasattr(llm, "llm_embedding") else llm.speech_embedding
    sos = specials.weight[llm.sos].reshape(1, 1, -1)
    task = specials.weight[llm.task_id].reshape(1, 1, -1)
    speech_emb = llm.speech_embedding(prompt_tokens.to(torch.int64).unsqueeze(0))
    lm_input = torch.cat([sos, text_emb, task, speech_emb], dim=1)
    s = lm_input.shape[1]
    masks = torch.tril(torch.ones((1, s, s))).to(torch.bool)
    hidden, cache = llm.llm.forward_one_step(lm_input, masks=masks, cache=None)
    logp = llm.llm_decoder(hidden[:, -1]).log_softmax(dim=-1)
    w.stage(f"llm.prefill/{n}",
            {"text_ids": text[0].to(torch.int32), "prompt_speech_tokens": prompt_tokens,
             "inputs_embeds": lm_input, "position_ids": torch.arange(s).unsqueeze(0),
             "attention_mask": masks.to(torch.float32)},
            {"hidden_states": hidden, "logp": logp[0]}, 1e-3)
    token = int(logp[0, :6561].argmax())
    step_in = llm.speech_embedding.weight[token].reshape(1, 1, -1)
    step_masks = torch.tril(torch.ones((1, 1, 1))).to(torch.bool)
    hidden2, _ = llm.llm.forward_one_step(step_in, masks=step_masks, cache=cache)
    logp2 = llm.llm_decoder(hidden2[:, -1]).log_softmax(dim=-1)
    w.stage(f"llm.decode/{n}",
            {"token": torch.tensor([token], dtype=torch.int32), "inputs_embeds": step_in,
             "prefill_inputs_embeds": lm_input,
             "position_ids": torch.tensor([[s]]), "attention_mask": torch.ones(1, 1, s + 1)},
            {"hidden_states": hidden2, "logp": logp2[0]}, 1e-3,
            "runs after llm.prefill of the same text, on its cache")


def _llm_greedy(w, n, llm, prompt_ids, ids, prompt_tokens, logp_steps=8):
    """Upstream's own decode loop, Qwen2LM.inference (cosyvoice/llm/llm.py:459-550) as is, with
    argmax as its `sampling` (RAS draws cannot be matched outside torch): the whole token sequence
    up to a stop id or max_len, with ignore_eos and min/max length from upstream's code, and the
    log-probabilities of the first `logp_steps` steps (read from the head by a forward hook)."""
    steps = []
    hook = llm.llm_decoder.register_forward_hook(
        lambda module, args, out: steps.append(out[0].log_softmax(dim=-1).clone()))
    saved = llm.sampling
    margins = []

    def greedy(scores, decoded, k):  # scores: logp with eos masked while i < min_len
        top2 = scores.topk(2).values
        margins.append(float(top2[0] - top2[1]))
        return int(scores.argmax())
    llm.sampling = greedy
    try:
        tokens = list(llm.inference(
            text=ids.to(torch.int64).unsqueeze(0), text_len=torch.tensor([len(ids)]),
            prompt_text=prompt_ids.to(torch.int64).unsqueeze(0),
            prompt_text_len=torch.tensor([len(prompt_ids)]),
            prompt_speech_token=prompt_tokens.to(torch.int64).unsqueeze(0),
            prompt_speech_token_len=torch.tensor([len(prompt_tokens)]),
            embedding=torch.zeros(1, 0)))
    finally:
        llm.sampling = saved
        hook.remove()
    w.stage(f"llm.greedy/{n}",
            {"text_ids": ids, "prompt_text_ids": prompt_ids, "prompt_speech_tokens": prompt_tokens},
            {"tokens": torch.tensor(tokens, dtype=torch.int32),
             "logp": torch.stack(steps[:logp_steps])}, 1e-3,
            f"upstream Qwen2LM.inference, argmax sampling: {len(tokens)} tokens, "
            f"{'stop id' if len(steps) > len(tokens) else 'max_len'}; smallest top-2 logp margin "
            f"{min(margins):.2e}")


def _llm_ras(w, llm, cases=32):
    """Upstream's own sampling_ids + ras_sampling (cosyvoice/llm/llm.py:150-160,
    cosyvoice/utils/common.py:137-167, with the yaml's top_p/top_k/win_size/tau_r) on crafted
    log-probabilities. torch's multinomial is replaced by a draw we hand it, picked by the rule
    voxserve's MultinomialIndex uses (the first index whose cumulative weight exceeds u * total),
    so the candidate set and its order, the repetition branch and the eos masking are upstream's."""
    g = torch.Generator().manual_seed(1234)
    vocab = llm.speech_token_size + 3
    logps, decodeds, ignores, draws = [], [], [], []
    tokens, sizes, branches = [], [], []
    calls = []

    def fake_multinomial(weights, num_samples, replacement=False):
        u = calls[-1][0].pop(0)
        cum = torch.cumsum(weights.double(), 0)
        hit = (cum > u * float(cum[-1])).nonzero()
        index = int(hit[0]) if len(hit) else int((weights > 0).nonzero()[-1])
        calls[-1][1].append(len(weights))
        return torch.tensor([index])
    saved = torch.Tensor.multinomial
    torch.Tensor.multinomial = fake_multinomial
    try:
        for i in range(cases):
            logits = torch.randn(vocab, generator=g) * [0.5, 2.0, 5.0, 12.0][i % 4]
            if i % 4 == 1:
                logits = logits.round()  # many equal probabilities: the stable sort's order
            logp = logits.log_softmax(dim=0)
            if i % 8 == 5:
                logp[llm.speech_token_size] = logp.max() + 2.0  # eos likely: masked or taken
            decoded = torch.randint(0, llm.speech_token_size, (i % 13,), generator=g).tolist()
            ranked = logp[:llm.speech_token_size].argsort(descending=True).tolist()
            if i % 3 == 0:  # the window holds the 10 likeliest tokens: the repetition branch
                decoded = ranked[:10][::-1]
            elif i % 3 == 1:  # the likeliest token just outside the window of 10
                decoded = [ranked[0]] + decoded[:1] * 10
            ignore_eos = i % 2 == 1
            u = torch.rand(2, generator=g)
            calls.append(([float(x) for x in u], []))
            token = llm.sampling_ids(logp.clone(), decoded, 25, ignore_eos=ignore_eos)
            logps.append(logp)
            decodeds.append([-1] * (12 - len(decoded)) + decoded)
            ignores.append(int(ignore_eos))
            draws.append(u)
            tokens.append(int(token))
            sizes.append(calls[-1][1][0])
            branches.append(len(calls[-1][1]) - 1)
    finally:
        torch.Tensor.multinomial = saved
    w.stage("llm.ras", {"logp": torch.stack(logps),
                        "decoded": torch.tensor(decodeds, dtype=torch.int32),
                        "ignore_eos": torch.tensor(ignores, dtype=torch.int32),
                        "draws": torch.stack(draws)},
            {"tokens": torch.tensor(tokens, dtype=torch.int32),
             "nucleus_size": torch.tensor(sizes, dtype=torch.int32),
             "repetition": torch.tensor(branches, dtype=torch.int32)}, 0.0,
            f"upstream sampling_ids/ras_sampling, injected draws; decoded padded with -1 in front; "
            f"{sum(branches)} of {cases} take the repetition branch")


def _flow(w, n, flow, prompt_tokens, speech, prompt_mel, embedding):
    """Non-streaming, finalize=True (cosyvoice/flow/flow.py:236-285; CosyVoice3's DiT flow:
    flow.py:370-414). For the DiT also flow.estimator_stream/N: the same pair through the
    chunk-masked estimator (graphs.StreamingEstimator)."""
    from graphs import DiTFlowEncoder, FlowEncoder, StreamingEstimator, is_dit
    tokens = torch.cat([prompt_tokens, speech]).to(torch.int64).unsqueeze(0)
    encoder = DiTFlowEncoder(flow) if is_dit(flow) else FlowEncoder(flow)
    mu, spks = encoder(tokens, embedding.unsqueeze(0))
    w.stage(f"flow.encoder/{n}", {"token": tokens.to(torch.int32), "embedding": embedding},
            {"mu": mu, "spks": spks}, 1e-3)
    t_len = mu.shape[2]
    cond = torch.zeros(1, 80, t_len)
    cond[0, :, :prompt_mel.shape[0]] = prompt_mel.T
    mask = torch.ones(1, 1, t_len)
    x = flow.decoder.rand_noise[:, :, :t_len]
    # One CFG step as CausalConditionalCFM.solve_euler batches it (flow_matching.py:71-125).
    t = torch.tensor([0.5, 0.5])
    est_in = {"x": torch.cat([x, x]), "mask": torch.cat([mask, mask]),
              "mu": torch.cat([mu, torch.zeros_like(mu)]), "t": t,
              "spks": torch.cat([spks, torch.zeros_like(spks)]),
              "cond": torch.cat([cond, torch.zeros_like(cond)])}
    out = flow.decoder.estimator(**est_in)
    w.stage(f"flow.estimator/{n}", est_in, {"estimator_out": out}, 1e-3)
    if is_dit(flow):
        out = StreamingEstimator(flow.decoder.estimator)(**est_in)
        w.stage(f"flow.estimator_stream/{n}", est_in, {"estimator_out": out}, 1e-3,
                "the DiT's chunk-masked attention (static_chunk_size frames)")
    feat, _ = flow.inference(token=speech.to(torch.int64).unsqueeze(0),
                             token_len=torch.tensor([len(speech)], dtype=torch.int32),
                             prompt_token=prompt_tokens.to(torch.int64).unsqueeze(0),
                             prompt_token_len=torch.tensor([len(prompt_tokens)], dtype=torch.int32),
                             prompt_feat=prompt_mel.unsqueeze(0),
                             prompt_feat_len=torch.tensor([prompt_mel.shape[0]], dtype=torch.int32),
                             embedding=embedding.unsqueeze(0), streaming=False, finalize=True)
    w.stage(f"flow.full/{n}", {"token": speech, "prompt_token": prompt_tokens,
                               "prompt_mel": prompt_mel, "embedding": embedding},
            {"mel": feat[0]}, 1e-2, "10 Euler steps, CFG 0.7, rand_noise; mel [80, T]")
    return feat


def _hift(w, n, hift, mel):
    """HiFTGenerator.inference (cosyvoice/hifigan/generator.py:558-571), split at our graphs."""
    from graphs import HiftDecoder
    f0 = hift.f0_predictor(mel)
    w.stage(f"hift.f0/{n}", {"mel": mel}, {"f0": f0}, 1e-3)
    s = hift.f0_upsamp(f0[:, None]).transpose(1, 2)
    sines, uv, _ = hift.m_source.l_sin_gen(s)
    source = hift.m_source.l_tanh(hift.m_source.l_linear(sines)).transpose(1, 2)
    w.stage(f"hift.source/{n}", {"f0": f0}, {"sines": sines, "uv": uv, "source": source}, 1e-3,
            "SineGen's phases and noise are random: compare uv exactly, source from sines")
    real, imag = hift._stft(source.squeeze(1))
    source_stft = torch.cat([real, imag], dim=1)
    magnitude, phase = HiftDecoder(hift)(mel, source_stft)
    w.stage(f"hift.decoder/{n}", {"mel": mel, "source_stft": source_stft},
            {"magnitude": magnitude, "phase": phase}, 1e-3)
    speech = hift.decode(x=mel, s=source)
    w.stage(f"hift.full/{n}", {"mel": mel, "source": source}, {"speech": speech}, 1e-3,
            "decode(): STFT, graphs, iSTFT, clamp")


def flow_stream(w, flow, prompt_tokens, prompt_mel, embedding, hops=3):
    """Upstream's streaming hops on one token sequence, as CosyVoice2Model.tts schedules them
    (cosyvoice/cli/model.py:343-375: the first hop padded so that prompt + hop is whole hops,
    then x stream_scale_factor up to token_max_hop_len; each hop's flow over the first offset +
    hop + pre_lookahead_len tokens, streaming=True, finalize=False; the rest with finalize=True
    and streaming=False, as token2wav's default), each mel from token_offset x 2 (model.py:303).
    The estimator runs with streaming=False, as upstream's ONNX/TensorRT estimator does (no
    `streaming` input: full attention, reference/model-interfaces.md 3.5): the exported estimator
    graph cannot be chunk-masked. flow.stream_encoder/N: the encoder graph's own inputs and
    outputs (flow.py:253-261) for the non-final hops.
    CosyVoice3's DiT flow: the non-final hops run as CosyVoice3Model.token2wav calls them
    (streaming=True, cli/model.py:357, :434), so the estimator's attention is chunk-masked (the
    flow_estimator_stream graph); the final call passes no `stream` (model.py:367-373): full
    attention, as CosyVoice2's."""
    from graphs import DiTFlowStreamEncoder, FlowStreamEncoder, is_dit
    dit = is_dit(flow)
    hop, max_hop, scale, lookahead = 25, 100, 2, flow.pre_lookahead_len
    prompt = len(prompt_tokens)
    first = hop + (-prompt) % hop
    offsets, ends, offset, this_hop = [], [], 0, first
    for _ in range(hops):
        offsets.append(offset)
        ends.append(offset + this_hop + lookahead)
        offset += this_hop
        this_hop = hop = min(max_hop, hop * scale)
    total = offset + 12  # the final call: what is left after the last hop (12 tokens)
    speech = torch.randint(0, 6561, (total,), dtype=torch.int32)
    decoder_forward = flow.decoder.forward
    if not dit:
        flow.decoder.forward = lambda *a, **k: decoder_forward(*a, **{**k, "streaming": False})
    try:
        for n, (offset, end) in enumerate(zip(offsets + [offset], ends + [total])):
            finalize = end == total
            token = speech[:end].to(torch.int64).unsqueeze(0)
            feat, _ = flow.inference(
                token=token, token_len=torch.tensor([end], dtype=torch.int32),
                prompt_token=prompt_tokens.to(torch.int64).unsqueeze(0),
                prompt_token_len=torch.tensor([prompt], dtype=torch.int32),
                prompt_feat=prompt_mel.unsqueeze(0),
                prompt_feat_len=torch.tensor([prompt_mel.shape[0]], dtype=torch.int32),
                embedding=embedding.unsqueeze(0), streaming=not finalize,
                finalize=finalize)
            w.stage(f"flow.stream/{n}",
                    {"token": speech[:end], "prompt_token": prompt_tokens, "prompt_mel": prompt_mel,
                     "embedding": embedding,
                     "token_offset": torch.tensor([offset], dtype=torch.int32),
                     "finalize": torch.tensor([int(finalize)], dtype=torch.int32)},
                    {"mel": feat[0, :, 2 * offset:]}, 1e-2,
                    f"hop {n}: tokens [{offset}, {end}) of {total}, "
                    f"{'finalize' if finalize else 'streaming, last 3 as lookahead context'}; "
                    f"mel [80, frames from 2 x token_offset], estimator "
                    f"{'chunk-masked' if dit and not finalize else 'full'} attention")
            if not finalize:
                all_tokens = torch.cat([prompt_tokens, speech[:end]]).to(torch.int64).unsqueeze(0)
                encoder = DiTFlowStreamEncoder(flow) if dit else FlowStreamEncoder(flow)
                mu, spks = encoder(all_tokens[:, :-lookahead],
                                                   all_tokens[:, -lookahead:],
                                                   embedding.unsqueeze(0))
                w.stage(f"flow.stream_encoder/{n}",
                        {"token": all_tokens[:, :-lookahead].to(torch.int32),
                         "context": all_tokens[:, -lookahead:].to(torch.int32),
                         "embedding": embedding.unsqueeze(0)},
                        {"mu": mu, "spks": spks}, 1e-3)
    finally:
        if not dit:
            del flow.decoder.forward


ENDOFPROMPT = 151646  # <|endofprompt|> (reference/model-interfaces.md 3.5)


@torch.no_grad()
def write_cosyvoice3(bundle, llm, flow, hift, campplus, tokenizer, prompt_mel_fmax, seed=0):
    """CosyVoice3's goldens: the audio frontend's (as CosyVoice2's, the prompt mel up to
    prompt_mel_fmax: the Nyquist rate), upstream's LLM (prefill, decode, greedy) on a zero-shot prompt as
    upstream's callers write it, the DiT flow (whole, one CFG pair full and chunk-masked, the
    streaming hops as CosyVoice3Model.token2wav runs them) and the causal HiFT (f0 in float64,
    the source on a voiced contour, the whole mel, the streaming hops) and upstream's
    CosyVoice3Model.tts end to end on fixed LLM tokens, whole and streaming."""
    w = Writer(bundle)
    os.makedirs(os.path.join(bundle, "goldens"), exist_ok=True)
    torch.manual_seed(seed)
    _prompt_frontend(w, bundle, campplus, tokenizer, prompt_mel_fmax)
    torch.manual_seed(seed + 1)
    # Zero-shot: the system text, <|endofprompt|>, then the transcript (llm.py:476-479 asserts
    # the token).
    prompt_ids = torch.tensor(tokenizer_files.encode("You are a helpful assistant.") +
                              [ENDOFPROMPT] + tokenizer_files.encode(PROMPT_TEXT),
                              dtype=torch.int32)
    prompt_tokens = torch.randint(0, 6561, (20,), dtype=torch.int32)
    for n, text in enumerate(TEXTS):
        ids = torch.tensor(tokenizer_files.encode(text), dtype=torch.int32)
        _llm(w, n, llm, prompt_ids, ids, prompt_tokens)
        _llm_greedy(w, n, llm, prompt_ids, ids, prompt_tokens)
    torch.manual_seed(seed + 2)
    # 30 prompt tokens: prompt + first hop spans the DiT's 50-frame chunks unevenly.
    prompt_tokens = torch.randint(0, 6561, (30,), dtype=torch.int32)
    prompt_mel = torch.randn(2 * len(prompt_tokens), 80)
    embedding = torch.randn(192)
    for n, count in enumerate((12, 40)):
        speech = torch.randint(0, 6561, (count,), dtype=torch.int32)
        _flow(w, n, flow, prompt_tokens, speech, prompt_mel, embedding)
    flow_stream(w, flow, prompt_tokens, prompt_mel, embedding)
    hop_mels = [torch.from_numpy(np.load(os.path.join(bundle, s["outputs"]["mel"])))
                for s in w.stages if s["name"].startswith("flow.stream/")]
    _causal_hift(w, hift, hop_mels)
    _token2wav(w, llm, flow, hift, prompt_tokens, prompt_mel, embedding)
    w.finish({"family": "cosyvoice3", "prompt_wav": "goldens/prompt.wav", "prompt_text": PROMPT_TEXT,
              "texts": TEXTS})


# CosyVoice3Model.silent_tokens (cli/model.py:423).
SILENT_TOKENS = (1, 2, 28, 29, 55, 248, 494, 2241, 2242, 2322, 2323)


def _token2wav(w, llm, flow, hift, prompt_tokens, prompt_mel, embedding, tokens=120):
    """Speech tokens to audio end to end through upstream's own CosyVoice3Model.tts, whole and
    streaming: its llm_job's silent-token filter, its hop schedule, token2wav's flow and causal
    HiFT. Only the LLM's sampling is replaced: it yields a fixed token list, which the runner's
    LLM is forced to pick. The list has a run of 8 different silent tokens (the filter drops the
    last 3) and no token twice within 10 (RAS would resample a repeat: common.py:140-143)."""
    from cosyvoice.cli.model import CosyVoice3Model
    generator = torch.Generator().manual_seed(3)
    raw = []
    while len(raw) < tokens:
        token = int(torch.randint(0, 6561, (1,), generator=generator))
        if token not in SILENT_TOKENS and token not in raw[-10:]:
            raw.append(token)
    raw[10:18] = SILENT_TOKENS[:8]

    class FixedTokens(torch.nn.Module):  # llm.inference's generator, without sampling
        def inference(self, **_):
            yield from raw

    def run(stream):
        model = CosyVoice3Model(FixedTokens(), flow, hift)  # fresh: tts() grows token_hop_len
        return [c["tts_speech"][0] for c in model.tts(
            text=torch.zeros(1, 1, dtype=torch.int32),
            flow_embedding=embedding.unsqueeze(0),
            flow_prompt_speech_token=prompt_tokens.to(torch.int64).unsqueeze(0),
            prompt_speech_feat=prompt_mel.unsqueeze(0), stream=stream)]

    inputs = {"raw_tokens": torch.tensor(raw, dtype=torch.int32), "prompt_token": prompt_tokens,
              "prompt_mel": prompt_mel, "embedding": embedding}
    whole = run(False)
    w.stage("token2wav.whole/0", inputs, {"audio": whole[0]}, 1e-3,
            "CosyVoice3Model.tts(stream=False) on fixed LLM tokens: silent filter, flow, causal HiFT")
    chunks = run(True)
    w.stage("token2wav.stream/0", {**inputs, "chunks": torch.tensor([len(c) for c in chunks])},
            {"audio": torch.cat(chunks)}, 1e-3,
            f"CosyVoice3Model.tts(stream=True): {len(chunks)} chunks of "
            f"{[len(c) for c in chunks]} samples")


def _causal_hift(w, hift, hop_mels):
    """CausalHiFTGenerator on the streaming flow's mels: vocoded whole and as token2wav streams
    them (cli/model.py:436-453: the mel accumulated, all of it vocoded each hop, the audio from
    the last offset on). Moves the f0 predictor to float64, as inference() does: export the graphs
    first."""
    from graphs import CausalHiftDecoder
    sin_gen = hift.m_source.l_sin_gen
    mel = torch.cat(hop_mels, dim=1).unsqueeze(0)  # [1, 80, T]
    lookahead = hift.f0_predictor.condnet[0].causal_padding
    predictor = hift.f0_predictor.to(torch.float64)
    for n, finalize in enumerate((True, False)):
        body, context = (mel, torch.zeros(1, 80, lookahead)) if finalize else \
            (mel[:, :, :-lookahead], mel[:, :, -lookahead:])
        f0 = predictor(mel.to(torch.float64), finalize=finalize)
        w.stage(f"hift.f0/{n}", {"mel": body, "context": context}, {"f0": f0}, 1e-3,
                "upstream's float64 predictor; finalize" if finalize else
                "upstream's float64 predictor; the last 3 frames as context")
    # A voiced contour (the random predictor never reaches the 10 Hz threshold): 90-310 Hz with
    # an unvoiced gap, through upstream's f0_upsamp and source module (fixed tables).
    frames = 60
    f0 = 200 + 110 * torch.sin(torch.arange(frames, dtype=torch.float32) / 7)
    f0[20:28] = 0
    s = hift.f0_upsamp(f0[None, None]).transpose(1, 2)
    sines, uv, _ = sin_gen(s)
    source, _, _ = hift.m_source(s)
    w.stage("hift.source/0", {"f0": f0[None]},
            {"sines": sines[0], "uv": uv[0, :, 0], "source": source[0, :, 0]}, 1e-3,
            "causal SineGen2: phase upsampled nearest, the fixed noise table from sample 0")
    f0 = predictor(mel.to(torch.float64), finalize=True).to(mel)
    source, _, _ = hift.m_source(hift.f0_upsamp(f0[:, None]).transpose(1, 2))
    source = source.transpose(1, 2)
    real, imag = hift._stft(source.squeeze(1))
    source_stft = torch.cat([real, imag], dim=1)
    padded = torch.cat([mel, torch.zeros(1, 80, hift.conv_pre_look_right)], dim=2)
    magnitude, phase = CausalHiftDecoder(hift)(padded, source_stft)
    w.stage("hift.decoder/0", {"mel": padded, "source_stft": source_stft},
            {"magnitude": magnitude, "phase": phase}, 1e-3, "finalize: 4 zero frames of context")
    speech, _ = hift.inference(speech_feat=mel, finalize=True)
    w.stage("hift.full/0", {"mel": mel[0]}, {"speech": speech[0]}, 1e-3,
            "inference(finalize=True): f0 in float64, source, decode, clamp")
    accumulated, offset = None, 0
    for n, hop in enumerate(hop_mels):
        finalize = n == len(hop_mels) - 1
        accumulated = hop[None] if accumulated is None else torch.cat([accumulated, hop[None]], 2)
        speech, _ = hift.inference(speech_feat=accumulated, finalize=finalize)
        emitted = speech[0, offset:]
        offset += emitted.shape[0]
        w.stage(f"hift.stream/{n}", {"mel": hop, "finalize": torch.tensor([int(finalize)])},
                {"audio": emitted}, 1e-3,
                f"hop {n}: the accumulated mel vocoded {'finally' if finalize else 'non-final'}"
                f", audio from sample {offset - emitted.shape[0]}")
