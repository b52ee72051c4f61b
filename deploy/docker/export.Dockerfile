# The CosyVoice export image: turns a pulled CosyVoice 2 checkpoint (voxserve models pull
# FunAudioLLM/CosyVoice2-0.5B) into a voxserve bundle, without a Python setup of your own.
# Debian's PyTorch, ONNX and NumPy (and espeak-ng and soundfile for the goldens' prompt); upstream
# CosyVoice and Matcha-TTS at the commits the export is checked against; tools/cosyvoice_export.
# Build with deploy/docker/build-export-image.sh (it fetches upstream at those commits, or takes
# a local copy with --upstream DIR). `voxserve models pull --export` runs it; by hand:
#   docker run --rm --user "$(id -u):$(id -g)" -v /models:/models voxserve-export \
#     --model-dir /models/CosyVoice2-0.5B --out /models/cosyvoice2-bundle --skip-if-current
# Then check it: voxserve check-model /models/cosyvoice2-bundle (the Kubernetes Job does both).
ARG BASE_IMAGE=debian:bookworm-slim
FROM ${BASE_IMAGE}
RUN apt-get update && apt-get install -y --no-install-recommends \
      python3 python3-torch python3-torchaudio python3-numpy python3-onnx python3-yaml \
      python3-scipy python3-regex python3-inflect python3-omegaconf python3-packaging \
      python3-soundfile espeak-ng \
    && rm -rf /var/lib/apt/lists/*
# The build context's export/ folder, laid out by build-export-image.sh: upstream/CosyVoice,
# upstream/Matcha-TTS, tools/cosyvoice_export.
COPY upstream/ /opt/upstream/
COPY tools/cosyvoice_export/ /opt/cosyvoice_export/
ENV VOXSERVE_COSYVOICE_REF=/opt/upstream/CosyVoice \
    VOXSERVE_MATCHA_REF=/opt/upstream/Matcha-TTS \
    PYTHONDONTWRITEBYTECODE=1
# Numeric, as the server's image; what it writes goes to the mounted volume and /tmp.
USER 10001:10001
ENTRYPOINT ["/usr/bin/python3", "/opt/cosyvoice_export/export.py"]
CMD ["--help"]
