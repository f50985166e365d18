/**
 * The memory and speed model's global constants. The model is a formula of architecture and settings; these are
 * the only numbers in it that are not architecture or settings, and each says where it comes from.
 */

/**
 * Bytes kept per attention-probability element by eager attention. PyTorch's autocast runs softmax in fp32 and the
 * Hugging Face attention implementations upcast it explicitly (`softmax(..., dtype=torch.float32)`), so the softmax
 * output autograd keeps is fp32 even in 16-bit training. (Megatron's fused softmax keeps 2 bytes, which gives the
 * 5as/h term of Korthikanti et al. 2022, Table 2; rigfit models the PyTorch eager path.)
 */
export const EAGER_SOFTMAX_BYTES = 4

/**
 * Bytes kept per element by an RMSNorm for backward. The Hugging Face (Llama, Mistral, Qwen2, Gemma, Phi-3) and
 * LitGPT RMSNorm implementations compute in fp32 (`hidden_states.to(torch.float32)`) and autograd keeps that fp32
 * input.
 */
export const RMSNORM_SAVED_BYTES = 4

/**
 * Copies of the logits alive at the start of backward, per element: the log-softmax output that cross-entropy
 * keeps, the dense gradient nll_loss writes, and the gradient of the log-softmax input. Under autocast they are fp32
 * (log_softmax and nll_loss are on autocast's fp32 list; Hugging Face models also call `logits.float()`). Without
 * autocast (true 16-bit precision) the loss runs in the logits' own 16-bit type: PyTorch's log_softmax keeps its
 * input dtype, and LitGPT's `chunked_cross_entropy` passes the 16-bit logits as they are.
 */
export const LOSS_LOGIT_COPIES = 3

/**
 * bitsandbytes NF4: 4-bit codes plus one fp32 absmax per 64-weight block (0.0625 B/param); double quantisation
 * stores those absmax values as 8-bit with one fp32 constant per 256 blocks (Dettmers et al. 2023, QLoRA §3:
 * 0.5 + 8/64 + 32/(64*256) bits -> 0.127 bits per parameter for the constants).
 */
export const NF4_BYTES_PER_PARAM = 0.5 + 1 / 64 + 4 / (64 * 256)

/** LLM.int8(): one byte per weight plus an fp32 scale per output row (negligible per parameter). */
export const INT8_BYTES_PER_PARAM = 1

/** bitsandbytes 8-bit optimizers: two 8-bit states plus one fp32 absmax per 2048-element block each. */
export const ADAM_8BIT_BYTES_PER_PARAM = 2 + (2 * 4) / 2048

/**
 * CUDA context plus the kernels a training step loads, by GPU generation. PyTorch >= 1.13 loads CUDA modules
 * lazily: a bare context measures 287 MB (pytorch/pytorch#86509, 2022) and "around 400MB" once kernels are used
 * (pytorch/pytorch#109888, maintainer comment, 2023); 426 MiB on an RTX 6000 Ada with PyTorch 2.10
 * (unslothai/unsloth-zoo#1053). Hopper images carry larger kernel binaries. Without lazy loading (CUDA < 11.7)
 * the context exceeds 1 GB (the 1343 MB measured in the Transformers single-GPU guide, v4.21); pass
 * `cudaContextBytes` (`rigfit estimate --cuda-context MiB`) for such stacks.
 */
export const CUDA_CONTEXT_BYTES = {
  preAmpere: 400 * 2 ** 20,
  ampereAda: 450 * 2 ** 20,
  hopperAndLater: 550 * 2 ** 20,
  /** ROCm's HIP context, of the same order (no published per-generation figure). */
  rocm: 450 * 2 ** 20,
} as const

/**
 * PyTorch's CUDA caching allocator (c10/cuda/CUDACachingAllocator.cpp, defaults without PYTORCH_CUDA_ALLOC_CONF):
 * requests of up to `kSmallSize` (1 MiB) come from 2 MiB segments of a small pool (`kSmallBuffer`); larger ones
 * from the large pool, those under `kMinLargeAlloc` (10 MiB) in shared 20 MiB segments (`kLargeBuffer`), the rest
 * in a segment of their own rounded up to `kRoundLarge` (2 MiB). A free block is split for a smaller request of
 * its pool and merged with free neighbours of its segment, never across segments; when a request finds the device
 * full, the free cached segments are released and the request retried.
 */
export const CACHING_ALLOCATOR = {
  smallSize: 2 ** 20,
  smallSegment: 2 * 2 ** 20,
  minLargeAlloc: 10 * 2 ** 20,
  largeSegment: 20 * 2 ** 20,
  roundLarge: 2 * 2 ** 20,
} as const

/**
 * Extra bytes the caching allocator reserves per byte of memory that one phase of the step (backward, or the
 * optimizer step) allocates and frees: blocks split for one size leave remainders the next request does not fit.
 * Blocks one phase frees that the other phase's requests cannot use are counted by the allocator's rules
 * (`reservation` in allocator.ts), not by this share. Fitted (`fitTuning` in validation-fit.ts, median absolute
 * error) to the dataset's nvidia-smi and max_memory_reserved rows; `validation.test.ts` checks it is the fitted value.
 */
export const ALLOCATOR_FRAGMENTATION = 0.13

/**
 * Share of the dense tensor-core (or vector) peak that matrix multiplies reach in training, with data-parallel
 * communication and memory-bound time modelled separately. Fitted (`fitTuning`, median absolute error) to the
 * dataset's tokens/s rows, mostly MosaicML llm-foundry's MPT tables on A100/H100 (512 to 65536 tokens) with their
 * NVLink scaling; cuBLAS GEMMs of large transformer shapes run at 80-90% of peak on A100. `validation.test.ts`
 * checks it is the fitted value.
 */
export const MATMUL_EFFICIENCY = 0.9

/**
 * Share of the matmul efficiency that attention's score and value products (`attentionFlopsPerToken`) reach.
 * Attention kernels are not one large GEMM: FlashAttention tiles QKᵀ, the online softmax and PV per block of
 * queries, with non-matmul work between the products and a backward that recomputes the scores. FlashAttention-2
 * (Dao 2023, arXiv 2307.08691) reaches 50-73% of an A100's peak forward and less backward, against 80-90% for
 * cuBLAS GEMMs; the Triton and FlashAttention-1 kernels of older stacks reach 25-40%; eager attention runs batched
 * GEMMs of depth head_dim, too shallow to keep the tensor cores busy. Fitted (`fitTuning`, median absolute error)
 * to the tokens/s rows jointly with the matmul efficiency; `validation.test.ts` checks it is the fitted value.
 */
export const ATTENTION_EFFICIENCY = 0.7

/**
 * Share of the matmul efficiency a Hopper GPU (H100, H200) sustains against its spec-sheet peak, which is quoted at
 * the boost clock: at the 700 W power limit of a training step the clock runs lower (`sustainedPeakShare`). Fitted
 * (`fitTuning`, median absolute error) to the Hopper tokens/s rows (rigfit's H100 calibration, llm-foundry's H100
 * tables); `validation.test.ts` checks it is the fitted value.
 */
export const HOPPER_SUSTAINED_SHARE = 0.84

/** Share of the peak memory bandwidth element-wise kernels reach (STREAM-like kernels on A100/H100: 80-90%). */
export const BANDWIDTH_EFFICIENCY = 0.8

/**
 * Memory traffic of the element-wise work (norms, activations, softmax, dropout, residual adds, their backward)
 * per byte of saved activations: each saved byte is written in forward and read in backward, and its gradient
 * is written and read once more ("Data Movement Is All You Need", Ivanov et al. 2021, counts 3-5 passes).
 */
export const ELEMENTWISE_TRAFFIC_PER_ACTIVATION_BYTE = 4

/** Effective host<->device copy rate for offloading (PCIe 4.0 x16 is 32 GB/s per direction; pinned copies reach ~60%). */
export const PCIE_EFFECTIVE_GBS = 20

/**
 * Rate of an optimizer step on the host (DeepSpeed's CPU Adam is AVX-vectorised and memory-bound: ~20 GB/s of
 * states), shared by the ranks of a node, which step at the same time.
 */
export const HOST_OPTIMIZER_GBS = 20

/**
 * Host and launch cost of one GPU kernel in eager PyTorch, paid once per kernel whatever its size: the Python
 * call, autograd's bookkeeping, the ATen dispatcher and `cudaLaunchKernel` (5-25 µs of CPU work per op; the
 * GPU-side ramp and tail of a small kernel is of the same order). It is what keeps a small model at a small
 * micro-batch far below its FLOP-bound speed. Fitted (`fitTuning`) to the launch-bound tokens/s rows alone: only
 * rows of small models at small batches constrain it, and fitted to every row it drifts to 4 µs, slowing nothing it
 * then predicts. `validation.test.ts` checks it is the fitted value.
 */
export const KERNEL_OVERHEAD_SECONDS = 17e-6

/**
 * Memory traffic of PyTorch's multi-tensor (`foreach`) and per-tensor AdamW/SGD steps relative to the fused
 * kernel's one pass: `_multi_tensor_adamw` runs lerp, mul, addcmul, sqrt, div, add and addcdiv as separate sweeps
 * over the states (PyTorch torch/optim/adamw.py), which moves about twice the bytes of `fused=True`.
 */
export const UNFUSED_OPTIMIZER_TRAFFIC_FACTOR = 2

/**
 * Kernels of one optimizer step per parameter tensor in the per-tensor loop (`foreach=False`, or the AdamW of
 * Transformers before v4.30): about a dozen element-wise ops each, launched one tensor at a time.
 */
export const OPTIMIZER_KERNELS_PER_TENSOR = 12

/**
 * Kernels torch.compile leaves of an eager block: Inductor fuses the element-wise chains between matmuls into
 * single kernels, so what remains is the matmuls, attention and a handful of fused point-wise kernels, about a
 * third of the eager launches.
 */
export const COMPILED_KERNEL_SHARE = 1 / 3

/**
 * Device memory of one NCCL (or RCCL) connection: a FIFO for each of its three protocols, LL
 * (`8 lines x 512 threads x 8 steps x 16 B` = 512 KiB), LL128 (`120 x 640 x 8 x 8 B` = 4,800 KiB) and Simple
 * (`NCCL_BUFFSIZE`, 4 MiB): NCCL's `DEFAULT_LL_BUFFSIZE`, `DEFAULT_LL128_BUFFSIZE` and `DEFAULT_BUFFSIZE` in
 * src/init.cc, 9.19 MiB per connection in all.
 */
export const NCCL_CONNECTION_BYTES = 512 * 2 ** 10 + 4800 * 2 ** 10 + 4 * 2 ** 20

/**
 * Connections whose buffers a rank holds per channel for the collectives of data parallelism: the ring receives
 * from one neighbour and sends to the other whatever the number of ranks ("Ring uses a limited amount of memory as
 * it only has 2 connections regardless of the scale", NVIDIA/nccl#986), with the buffers on the receiving side,
 * and the tree adds its parent and its child.
 */
export const NCCL_CONNECTIONS_PER_CHANNEL = 3

/**
 * Channels NCCL opens per link: two per NVLink ("we need to launch 2 CTAs per NVLink in order to saturate the BW",
 * NVIDIA/nccl#1703), up to NCCL's 32: 12 on a V100 SXM2 (6 NVLinks), 24 on an A100 SXM4 (12), 32 on Hopper and
 * later (18; NVIDIA/nccl#1685 logs 32 on 8 H100, and an H800 with 8 NVLinks logs "16 coll channels",
 * NVIDIA/nccl#892); AMD's Infinity Fabric 2 per xGMI link (7 on an MI300X). Over PCIe or shared memory NCCL opens 2
 * (channels 00 and 01 "via SHM", NVIDIA/nccl-tests#228).
 */
export const NCCL_CHANNELS = { volta: 12, ampere: 24, hopperAndLater: 32, xgmi: 14, pcie: 2 } as const

/**
 * Elements of each of the two gradient buckets DeepSpeed ZeRO-1 and ZeRO-2 reduce through
 * (`contiguous_gradients` with `overlap_comm` allocates two `reduce_bucket_size` buffers in the gradients' type
 * during backward), per hidden size: `rigfit export` writes `reduce_bucket_size` as hidden x hidden, the value the
 * Hugging Face integration fills `"auto"` with.
 */
export const ZERO_REDUCE_BUCKET_PER_HIDDEN_SQUARED = 1
