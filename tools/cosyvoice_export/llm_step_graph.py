"""CosyVoice's LLM step graph (llm_step*.onnx): the Qwen2 backbone and CosyVoice's head in one graph
built node by node from the weights, as a modern decoder runtime builds it (the idea of
onnxruntime-genai's model builder; our own code): ONNX Runtime's com.microsoft GroupQueryAttention
with rotary inside the op, packed QKV, fused RMSNorm + residual, and a KV cache that the caller
binds as both past and present (one buffer sized to the capacity, written in place).

  inputs   inputs_embeds f32 [B, S, H]          the new positions' embeddings (host-built)
           seqlens_k int32 [B]                  per row: filled slots after this run, minus one
           total_sequence_length int32 []       max over rows of seqlens_k + 1 (a prefill: S)
           past_key_<l>, past_value_<l> T [B, kv, P, D]   the cache (P = capacity)
  outputs  logits f32 [B, head_outputs]         of each row's last new position
           present_key_<l>, present_value_<l> T [B, kv, P, D]   the same memory as past_*

T is float32 (the CPU provider's GQA kernel), float16 or bfloat16 (CUDA's): the same nodes in
every precision, so the CPU tests run the very graph the GPU runs. inputs_embeds and logits stay
float32 at the boundary; the head (hidden -> 6564 logits, llm.py:281) is computed in float32
from the final norm's output in every precision, since sampling's top-p boundary reads the
logits' small differences. A row of S = 1 is a decode step at position seqlens_k (its new key
goes to that slot); one row of S = total_sequence_length is a prefill from slot 0. Rows of one
decode batch may have different lengths: GQA attends to each row's own seqlens_k + 1 slots.

The arithmetic follows the Qwen2 stand-in (standins/qwen2.py, Hugging Face's Qwen2): RMSNorm
with eps from the config, rotate-half RoPE at rope_theta with caches computed as torch computes
them (float32), SiLU-gated MLP."""
import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
PRECISIONS = {"fp32": TensorProto.FLOAT, "fp16": TensorProto.FLOAT16, "bf16": TensorProto.BFLOAT16}
# Graph metadata the C++ decoder reads (llm_step_graph.cc).
FORMAT = "voxserve-cosyvoice-llm-step-1"


def _bf16_bytes(array):
    """float32 -> bfloat16 bit patterns, rounded to nearest even (numpy has no bfloat16)."""
    bits = np.ascontiguousarray(array, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return rounded.astype(np.uint16).tobytes()


def _initializer(name, array, elem):
    array = np.ascontiguousarray(array, dtype=np.float32)
    if elem == TensorProto.FLOAT:
        return numpy_helper.from_array(array, name)
    if elem == TensorProto.FLOAT16:
        return numpy_helper.from_array(array.astype(np.float16), name)
    tensor = TensorProto()
    tensor.name, tensor.data_type = name, TensorProto.BFLOAT16
    tensor.dims.extend(array.shape)
    tensor.raw_data = _bf16_bytes(array)
    return tensor


def rope_caches(head_dim, theta, positions):
    """cos/sin [positions, head_dim / 2] as the stand-in's rope() computes its angles (float32
    inv_freq, float32 position x inv_freq, float32 cos/sin), so CPU float32 matches torch."""
    inv_freq = 1.0 / (theta ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim))
    freqs = torch.arange(positions, dtype=torch.int64).to(torch.float32).unsqueeze(-1) * inv_freq
    return freqs.cos().numpy(), freqs.sin().numpy()


class _Graph:
    def __init__(self, elem):
        self.elem = elem
        self.nodes, self.inits = [], []
        self.count = 0

    def weight(self, name, array, elem=None):
        self.inits.append(_initializer(name, array, self.elem if elem is None else elem))
        return name

    def const_i64(self, name, values):
        self.inits.append(numpy_helper.from_array(np.array(values, dtype=np.int64), name))
        return name

    def node(self, op, inputs, outputs=1, domain="", name=None, **attrs):
        self.count += 1
        base = name or f"{op}_{self.count}"
        outs = [f"{base}/out{i}" if isinstance(outputs, int) else outputs[i]
                for i in range(outputs if isinstance(outputs, int) else len(outputs))]
        self.nodes.append(helper.make_node(op, inputs, outs, name=base, domain=domain or None,
                                           **attrs))
        return outs[0] if len(outs) == 1 else outs


def _t(linear):
    """nn.Linear weight [out, in] -> MatMul's [in, out]."""
    return linear.weight.detach().to(torch.float32).numpy().T


def build(qwen, head, precision="fp32", max_positions=32768):
    """qwen: the Qwen2ForCausalLM stand-in (Hugging Face parameter names); head: CosyVoice's
    llm_decoder nn.Linear(hidden, head_outputs). Returns the ModelProto."""
    elem = PRECISIONS[precision]
    c = qwen.config
    layers, heads, kv, d = c.num_hidden_layers, c.num_attention_heads, c.num_key_value_heads, c.head_dim
    h_size = c.hidden_size
    if d % 16:
        raise ValueError(f"head_dim {d}: GroupQueryAttention's rotary needs a multiple of 16")
    eps = float(c.rms_norm_eps)
    g = _Graph(elem)
    model = qwen.model
    cos, sin = rope_caches(d, c.rope_theta, max_positions)
    g.weight("cos_cache", cos)
    g.weight("sin_cache", sin)

    x = "inputs_embeds"
    if elem != TensorProto.FLOAT:
        x = g.node("Cast", [x], name="embeds_cast", to=elem)
    residual, pending = x, None  # pending: the last block's output, not yet added
    present = []
    for i, layer in enumerate(model.layers):
        a = layer.self_attn
        ln1 = g.weight(f"layers.{i}.input_layernorm.weight", layer.input_layernorm.weight.detach())
        if pending is None:
            h = g.node("SimplifiedLayerNormalization", [residual, ln1], name=f"layers.{i}.ln1",
                       axis=-1, epsilon=eps, stash_type=1)
        else:
            h, _, _, residual = g.node("SkipSimplifiedLayerNormalization", [pending, residual, ln1],
                                       outputs=4, domain="com.microsoft", name=f"layers.{i}.ln1",
                                       epsilon=eps)
        # Packed QKV: [q | k | v] columns, as GroupQueryAttention takes them without key/value.
        wqkv = np.concatenate([_t(a.q_proj), _t(a.k_proj), _t(a.v_proj)], axis=1)
        bqkv = torch.cat([a.q_proj.bias, a.k_proj.bias, a.v_proj.bias]).detach()
        qkv = g.node("MatMul", [h, g.weight(f"layers.{i}.qkv.weight", wqkv)], name=f"layers.{i}.qkv")
        qkv = g.node("Add", [qkv, g.weight(f"layers.{i}.qkv.bias", bqkv)], name=f"layers.{i}.qkv_bias")
        names = [f"present_key_{i}", f"present_value_{i}"]
        attn, _, _ = g.node(
            "GroupQueryAttention",
            [qkv, "", "", f"past_key_{i}", f"past_value_{i}", "seqlens_k", "total_sequence_length",
             "cos_cache", "sin_cache"],
            outputs=[f"layers.{i}.attn/out0", *names], domain="com.microsoft",
            name=f"layers.{i}.attn", num_heads=heads, kv_num_heads=kv, do_rotary=1,
            rotary_interleaved=0, local_window_size=-1)
        present += names
        o = g.node("MatMul", [attn, g.weight(f"layers.{i}.o_proj.weight", _t(a.o_proj))],
                   name=f"layers.{i}.o_proj")
        ln2 = g.weight(f"layers.{i}.post_attention_layernorm.weight",
                       layer.post_attention_layernorm.weight.detach())
        h2, _, _, residual = g.node("SkipSimplifiedLayerNormalization", [o, residual, ln2],
                                    outputs=4, domain="com.microsoft", name=f"layers.{i}.ln2",
                                    epsilon=eps)
        m = layer.mlp
        gate = g.node("MatMul", [h2, g.weight(f"layers.{i}.gate.weight", _t(m.gate_proj))],
                      name=f"layers.{i}.gate")
        up = g.node("MatMul", [h2, g.weight(f"layers.{i}.up.weight", _t(m.up_proj))],
                    name=f"layers.{i}.up")
        silu = g.node("Mul", [gate, g.node("Sigmoid", [gate], name=f"layers.{i}.sigmoid")],
                      name=f"layers.{i}.silu")
        act = g.node("Mul", [silu, up], name=f"layers.{i}.act")
        pending = g.node("MatMul", [act, g.weight(f"layers.{i}.down.weight", _t(m.down_proj))],
                         name=f"layers.{i}.down")
    norm = g.weight("norm.weight", model.norm.weight.detach())
    final, _, _, _ = g.node("SkipSimplifiedLayerNormalization", [pending, residual, norm],
                            outputs=4, domain="com.microsoft", name="final_norm", epsilon=eps)
    # Each row's last position ([B, S, H] -> [B, 1, H] -> [B, H]): a prefill's first token.
    last = g.node("Slice", [final, g.const_i64("last_start", [-1]),
                            g.const_i64("last_end", [np.iinfo(np.int64).max]),
                            g.const_i64("last_axis", [1])], name="last_position")
    last = g.node("Reshape", [last, g.const_i64("rows_by_hidden", [-1, h_size])], name="rows")
    if elem != TensorProto.FLOAT:
        last = g.node("Cast", [last], name="head_cast", to=TensorProto.FLOAT)
    # CosyVoice3LM's head has no bias (llm.py:687): its MatMul gives the logits.
    logits = g.node("MatMul", [last, g.weight("head.weight", _t(head), TensorProto.FLOAT)],
                    outputs=["logits"] if head.bias is None else 1, name="head")
    if head.bias is not None:
        g.node("Add", [logits, g.weight("head.bias", head.bias.detach(), TensorProto.FLOAT)],
               outputs=["logits"], name="head_bias")

    cache = ["batch", kv, "past_sequence", d]
    inputs = [helper.make_tensor_value_info("inputs_embeds", TensorProto.FLOAT,
                                            ["batch", "sequence", h_size]),
              helper.make_tensor_value_info("seqlens_k", TensorProto.INT32, ["batch"]),
              helper.make_tensor_value_info("total_sequence_length", TensorProto.INT32, [])]
    outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT,
                                             ["batch", head.out_features])]
    for i in range(layers):
        for kind in ("key", "value"):
            inputs.append(helper.make_tensor_value_info(f"past_{kind}_{i}", elem, cache))
            outputs.append(helper.make_tensor_value_info(f"present_{kind}_{i}", elem, cache))
    graph = helper.make_graph(g.nodes, f"cosyvoice_llm_step_{precision}", inputs, outputs,
                              g.inits)
    model_proto = helper.make_model(
        graph, producer_name="voxserve tools/cosyvoice_export",
        opset_imports=[helper.make_opsetid("", OPSET), helper.make_opsetid("com.microsoft", 1)])
    model_proto.ir_version = 8  # ONNX 1.12 (Debian 12) writes IR 8; ORT reads it
    for key, value in (("format", FORMAT), ("precision", precision),
                       ("max_positions", str(max_positions))):
        entry = model_proto.metadata_props.add()
        entry.key, entry.value = key, value
    return model_proto


def export(qwen, head, path, precision="fp32", max_positions=32768):
    with torch.no_grad():
        model = build(qwen, head, precision, max_positions)
    onnx.save(model, path)
    return path
