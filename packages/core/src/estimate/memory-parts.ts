/** The six terms training allocates (the estimate's breakdown), bottom to top, in the words every view uses. */
export const MEMORY_TERMS = [
  ['weights', 'weights'],
  ['gradients', 'gradients'],
  ['optimizer', 'optimizer states'],
  ['activations', 'activations'],
  ['logits', 'logits and loss'],
  ['other', 'other (buffers, temporaries)'],
] as const

/**
 * The parts a device's memory is shown in (CLI, HTML report), bottom to top: the training terms; "allocator
 * reserve", what the caching allocator holds beyond the peak (reserved − peak allocated); then the CUDA context
 * and NCCL's buffers on top.
 */
export const MEMORY_PARTS = [
  ...MEMORY_TERMS,
  ['reserve', 'allocator reserve'],
  ['cudaContext', 'CUDA context'],
  ['communication', 'NCCL buffers'],
] as const

export type MemoryPart = (typeof MEMORY_PARTS)[number][0]

/** The words for one part. */
export function memoryPartLabel(part: MemoryPart): string {
  const found = MEMORY_PARTS.find(([key]) => key === part)
  return found ? found[1] : part
}
