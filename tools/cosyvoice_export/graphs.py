"""Our own ONNX exports of what upstream does not export (reference/model-interfaces.md 3.3):
the flow encoder with the speaker projection, and HiFT's f0 predictor and decoder (SineGen, STFT
and iSTFT stay in C++). The LLM is built node by node instead (llm_step_graph.py).
The estimator is exported with upstream's own signature (cosyvoice/bin/export_onnx.py).
Each wrapper calls upstream's submodules in upstream's order; the line cited is what it follows.
Opset 17: the highest Debian's torch 1.13 exports (upstream's script uses 18)."""
import inspect

import torch
from torch import nn
import torch.nn.functional as F

OPSET = 17
# torch >= 2.9 exports through torch.export (dynamo) unless told otherwise; these wrappers are
# written for the TorchScript exporter that Debian's torch 1.13 has (the GPU check's device image
# runs a newer torch: scripts/gpu-check.sh exports the real-size bundle there).
TORCHSCRIPT = {"dynamo": False} if "dynamo" in inspect.signature(torch.onnx.export).parameters else {}


def _export(module, args, path, inputs, outputs, dynamic):
    # A new wrapper is in training mode, and torch.onnx.export restores the mode it found,
    # recursively: without this the wrapped upstream modules would leave with dropout on.
    module.eval()
    torch.onnx.export(module, args, path, input_names=inputs, output_names=outputs,
                      dynamic_axes=dynamic, opset_version=OPSET, do_constant_folding=True,
                      **TORCHSCRIPT)


def _speaker(flow, embedding):
    """The x-vector as both flows project it: L2-normalised, then Linear 192 -> 80
    (flow.py:248-249, :382-383)."""
    return flow.spk_embed_affine_layer(F.normalize(embedding, dim=1))


class FlowEncoder(nn.Module):
    """CausalMaskedDiffWithXvec.inference up to mu, non-streaming, finalize=True
    (cosyvoice/flow/flow.py:246-263): tokens are prompt ++ new, one row."""

    def __init__(self, flow):
        super().__init__()
        self.flow = flow

    def forward(self, token, embedding):
        f = self.flow
        spks = _speaker(f, embedding)
        # From the input's shape at run time (torch.full would bake the traced length in).
        token_len = torch.ones_like(token).sum(dim=1).to(torch.int32)
        x = f.input_embedding(torch.clamp(token, min=0))
        h, _ = f.encoder(x, token_len, streaming=False)
        mu = f.encoder_proj(h).transpose(1, 2)
        return mu, spks


def export_flow_encoder(flow, path):
    _export(DiTFlowEncoder(flow) if is_dit(flow) else FlowEncoder(flow),
            (torch.randint(0, 6561, (1, 20)), torch.randn(1, 192)), path,
            ["token", "embedding"], ["mu", "spks"],
            {"token": {1: "tokens"}, "mu": {2: "frames"}})
    if not is_dit(flow):  # CosyVoice3's has no positional table: no token limit of its own
        _record_max_tokens(flow, path)


class FlowStreamEncoder(nn.Module):
    """CausalMaskedDiffWithXvec.inference up to mu for a streaming hop, streaming=True,
    finalize=False (cosyvoice/flow/flow.py:257-261): the prefix's last pre_lookahead_len tokens
    come in as `context` (the pre-lookahead layer's right context, upsample_encoder.py:82-94)
    instead of as tokens, and the encoder attends through its chunk masks (static_chunk_size
    tokens, then x2 frames after the upsampling, upsample_encoder.py:286, :299). Traced with
    streaming=True, so the masks (subsequent_chunk_mask, utils/mask.py:127-157, written by
    upstream to be exportable) are inside the graph. mu covers the tokens only: [1, 80, 2 N]."""

    def __init__(self, flow):
        super().__init__()
        self.flow = flow

    def forward(self, token, context, embedding):
        f = self.flow
        spks = _speaker(f, embedding)
        # flow.py:261 passes the length with the context (prompt + N + 3); the encoder's pad masks
        # (make_pad_mask against the shorter T, upsample_encoder.py:276, :292) are then all true,
        # as they are with the tokens' own length.
        token_len = (torch.ones_like(token).sum(dim=1) + torch.ones_like(context).sum(dim=1))
        h, _ = f.encoder(f.input_embedding(torch.clamp(token, min=0)), token_len.to(torch.int32),
                         context=f.input_embedding(torch.clamp(context, min=0)), streaming=True)
        mu = f.encoder_proj(h).transpose(1, 2)
        return mu, spks


class DiTFlowEncoder(nn.Module):
    """CosyVoice3's CausalMaskedDiffWithDiT.inference up to mu (cosyvoice/flow/flow.py:381-395):
    no encoder, the token embedding through the pre-lookahead layer, each token repeated
    token_mel_ratio times. finalize=True: the layer pads its right context with zeros. The
    embedding's pad mask (flow.py:387-388) is all ones for one row and left out."""

    def __init__(self, flow):
        super().__init__()
        self.flow = flow

    def forward(self, token, embedding):
        f = self.flow
        spks = _speaker(f, embedding)
        h = f.pre_lookahead_layer(f.input_embedding(torch.clamp(token, min=0)))
        return _repeat_frames(h, f.token_mel_ratio).transpose(1, 2), spks


class DiTFlowStreamEncoder(nn.Module):
    """The same for a non-final streaming hop (finalize=False, flow.py:394): the last
    pre_lookahead_len tokens are the layer's right context (upsample_encoder.py:89-94) and mu
    covers the tokens before them."""

    def __init__(self, flow):
        super().__init__()
        self.flow = flow

    def forward(self, token, context, embedding):
        f = self.flow
        spks = _speaker(f, embedding)
        h = f.pre_lookahead_layer(f.input_embedding(torch.clamp(token, min=0)),
                                  context=f.input_embedding(torch.clamp(context, min=0)))
        return _repeat_frames(h, f.token_mel_ratio).transpose(1, 2), spks


def _repeat_frames(h, ratio):
    # h.repeat_interleave(ratio, dim=1) (flow.py:395), written with expand and reshape: the same
    # values, and a graph torch 1.13 exports with a dynamic token axis.
    return h.unsqueeze(2).expand(-1, -1, ratio, -1).reshape(h.shape[0], -1, h.shape[2])


def is_dit(flow):
    return not hasattr(flow, "encoder")


def _record_max_tokens(flow, path):
    # The traced graph holds the relative-position tables as constants (torch extends them on
    # demand, cosyvoice/transformer/embedding.py extend_pe; the graph cannot): longer inputs fail
    # inside ORT. The table (2 * positions - 1 rows) bounds the upsampled frames, so the tokens
    # (prompt ++ new) are bounded by positions / token_mel_ratio; voxserve checks it up front.
    positions = min((m.pe.size(1) + 1) // 2 for m in flow.encoder.modules()
                    if hasattr(m, "extend_pe") and getattr(m, "pe", None) is not None)
    import onnx
    model = onnx.load(path)
    entry = model.metadata_props.add()
    entry.key, entry.value = "max_tokens", str(positions // flow.token_mel_ratio)
    onnx.save(model, path)


def export_flow_stream_encoder(flow, path):
    lookahead = flow.pre_lookahead_len
    # 60 tokens: more than two chunks of 25, so the trace runs the chunk masks' general case.
    wrapper = DiTFlowStreamEncoder(flow) if is_dit(flow) else FlowStreamEncoder(flow)
    _export(wrapper, (torch.randint(0, 6561, (1, 60)), torch.randint(0, 6561, (1, lookahead)),
                      torch.randn(1, 192)),
            path, ["token", "context", "embedding"], ["mu", "spks"],
            {"token": {1: "tokens"}, "mu": {2: "frames"}})
    if not is_dit(flow):
        _record_max_tokens(flow, path)


def _affine_layer_norms(module):
    """torch 1.13 exports a LayerNorm without affine parameters (the DiT's, modules.py:216, :237,
    :431) as a LayerNormalization whose scale input is empty, which the ONNX checker refuses:
    give each such norm a weight of ones and a bias of zeros, the same function."""
    for m in module.modules():
        if isinstance(m, nn.LayerNorm) and m.weight is None:
            m.weight = nn.Parameter(torch.ones(m.normalized_shape))
            m.bias = nn.Parameter(torch.zeros(m.normalized_shape))
            m.elementwise_affine = True


class StreamingEstimator(nn.Module):
    """CosyVoice3's DiT as a non-final streaming hop calls it (CosyVoice3Model.token2wav passes
    streaming=stream, cosyvoice/cli/model.py:357, :434): attention within chunks of static_chunk_size
    frames and those before (dit.py:163-164), the mask built inside the graph from its `mask`
    input. Upstream's own ONNX/TensorRT estimator has no such input and attends fully."""

    def __init__(self, estimator):
        super().__init__()
        self.estimator = estimator

    def forward(self, x, mask, mu, t, spks, cond):
        return self.estimator(x, mask, mu, t, spks, cond, streaming=True)


def export_estimator(estimator, path, dynamic_batch=False, streaming=False):
    """Upstream's names and dynamic axes (cosyvoice/bin/export_onnx.py, main); dynamic_batch: the
    rows axis dynamic too ("rows", any number of CFG pairs), so that one call serves the flow runs
    of several streams (FlowMatcher::RunBatch / RunPrefixBatch). streaming: the DiT's chunk-masked
    variant (StreamingEstimator), the optional flow_estimator_stream role."""
    # 130 frames for the chunk-masked trace: more than two of the DiT's 50-frame chunks, so the
    # trace runs the chunk mask's general case.
    _affine_layer_norms(estimator)
    t_len = 64
    if streaming:
        estimator, t_len = StreamingEstimator(estimator), 130
    args = (torch.randn(2, 80, t_len), torch.ones(2, 1, t_len), torch.randn(2, 80, t_len),
            torch.rand(2), torch.randn(2, 80), torch.randn(2, 80, t_len))
    dyn = {k: {2: "seq_len"} for k in ("x", "mask", "mu", "cond", "estimator_out")}
    if dynamic_batch:
        for k in ("x", "mask", "mu", "cond", "estimator_out", "t", "spks"):
            dyn.setdefault(k, {})[0] = "rows"
    _export(estimator, args, path, ["x", "mask", "mu", "t", "spks", "cond"], ["estimator_out"], dyn)


class HiftF0(nn.Module):
    """HiFTGenerator.inference's first step (cosyvoice/hifigan/generator.py:560)."""

    def __init__(self, hift):
        super().__init__()
        self.f0_predictor = hift.f0_predictor

    def forward(self, mel):
        return self.f0_predictor(mel)


class HiftDecoder(nn.Module):
    """HiFTGenerator.decode between the source STFT and the iSTFT (generator.py:507-536)."""

    def __init__(self, hift):
        super().__init__()
        self.hift = hift

    def forward(self, mel, source_stft):
        return _decode_after_conv_pre(self.hift, self.hift.conv_pre(mel), source_stft)


def _decode_after_conv_pre(h, x, source_stft):
    """decode() from conv_pre's output to magnitude and phase, the same in HiFTGenerator
    (generator.py:512-536) and CausalHiFTGenerator (:682-700)."""
    for i in range(h.num_upsamples):
        x = F.leaky_relu(x, h.lrelu_slope)
        x = h.ups[i](x)
        if i == h.num_upsamples - 1:
            x = h.reflection_pad(x)
        x = x + h.source_resblocks[i](h.source_downs[i](source_stft))
        xs = None
        for j in range(h.num_kernels):
            y = h.resblocks[i * h.num_kernels + j](x)
            xs = y if xs is None else xs + y
        x = xs / h.num_kernels
    x = h.conv_post(F.leaky_relu(x))  # default slope 0.01 (generator.py:530)
    bins = h.istft_params["n_fft"] // 2 + 1
    return torch.exp(x[:, :bins, :]), torch.sin(x[:, bins:, :])


def export_hift(hift, f0_path, decoder_path):
    """Both graphs with a dynamic rows axis: one call vocodes the equal-length mels of several
    streams' hops (HiftVocoder::VocodeBatch). Rows never mix: every operator is per row."""
    t_len = 10
    _export(HiftF0(hift), (torch.randn(2, 80, t_len),), f0_path, ["mel"], ["f0"],
            {"mel": {0: "rows", 2: "frames"}, "f0": {0: "rows", 1: "frames"}})
    frames = t_len * 480 // 4 + 1  # source samples / STFT hop, centred
    _export(HiftDecoder(hift), (torch.randn(2, 80, t_len), torch.randn(2, 18, frames)),
            decoder_path, ["mel", "source_stft"], ["magnitude", "phase"],
            {"mel": {0: "rows", 2: "frames"}, "source_stft": {0: "rows", 2: "stft_frames"},
             "magnitude": {0: "rows", 2: "stft_frames"}, "phase": {0: "rows", 2: "stft_frames"}})


class CausalHiftF0(nn.Module):
    """CosyVoice3's CausalConvRNNF0Predictor (cosyvoice/hifigan/f0_predictor.py:95-103): its
    first conv looks 3 frames right (causal_type 'right'); `context` is those frames, zeros when
    finalizing (the conv's own zero padding), the mel's next 3 frames otherwise (finalize=False
    passes them as the conv's cache). f0 covers `mel`'s frames. Upstream runs the predictor in
    float64 (generator.py:716-717); this graph is float32 (the drift is measured by the tests)."""

    def __init__(self, hift):
        super().__init__()
        self.f0_predictor = hift.f0_predictor

    def forward(self, mel, context):
        p = self.f0_predictor
        x = p.condnet[0](mel, context)
        for i in range(1, len(p.condnet)):
            x = p.condnet[i](x)
        return torch.abs(p.classifier(x.transpose(1, 2)).squeeze(-1))


class CausalHiftDecoder(nn.Module):
    """CosyVoice3's CausalHiFTGenerator.decode between the source STFT and the iSTFT
    (generator.py:672-705). conv_pre looks conv_pre_look_right (4) frames right: `mel` holds the
    frames to decode and those 4 after them, zeros when finalizing (finalize=True pads them),
    the next mel frames otherwise (generator.py:677-678); source_stft covers the decoded frames
    (120 F + 1 columns for F frames: the caller drops the rest, generator.py:679-680)."""

    def __init__(self, hift):
        super().__init__()
        self.hift = hift

    def forward(self, mel, source_stft):
        h = self.hift
        look = h.conv_pre_look_right
        return _decode_after_conv_pre(h, h.conv_pre(mel[:, :, :-look], mel[:, :, -look:]),
                                      source_stft)


def is_causal_hift(hift):
    return hasattr(hift, "conv_pre_look_right")


def export_causal_hift(hift, f0_path, decoder_path):
    """CosyVoice3's two graphs, rows dynamic as CosyVoice2's (export_hift)."""
    t_len, look = 10, hift.conv_pre_look_right
    lookahead = hift.f0_predictor.condnet[0].causal_padding
    _export(CausalHiftF0(hift), (torch.randn(2, 80, t_len), torch.randn(2, 80, lookahead)),
            f0_path, ["mel", "context"], ["f0"],
            {"mel": {0: "rows", 2: "frames"}, "context": {0: "rows"},
             "f0": {0: "rows", 1: "frames"}})
    frames = t_len * 480 // 4 + 1
    _export(CausalHiftDecoder(hift), (torch.randn(2, 80, t_len + look), torch.randn(2, 18, frames)),
            decoder_path, ["mel", "source_stft"], ["magnitude", "phase"],
            {"mel": {0: "rows", 2: "frames"}, "source_stft": {0: "rows", 2: "stft_frames"},
             "magnitude": {0: "rows", 2: "stft_frames"}, "phase": {0: "rows", 2: "stft_frames"}})
