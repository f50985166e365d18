import type { ModelSpec } from '../schemas/model-spec.js'

/**
 * Places frozen companion models (loaded in 16-bit for inference) beside the trained one: replicas on every GPU
 * when everything fits one GPU, otherwise one model per GPU, packing frozen models onto the GPUs the trained
 * model does not use first (first-fit decreasing).
 */
export interface FrozenModel {
  spec: ModelSpec
  params: number
}

export interface Placement {
  strategy: 'replicas' | 'model-split'
  /** Bytes of frozen weights on the GPU(s) that hold the trained model. */
  frozenBytesOnTrainingGpu: number
  devices: { device: number; models: string[]; frozenBytes: number }[]
  fits: boolean
}

const FROZEN_BYTES_PER_PARAM = 2

export function placeModels(input: {
  trainedId: string
  trainedBytes: number
  frozen: FrozenModel[]
  gpus: number
  capacityBytes: number
}): Placement {
  const frozenBytes = input.frozen.map((model) => ({
    id: model.spec.id,
    bytes: model.params * FROZEN_BYTES_PER_PARAM,
  }))
  const allFrozen = frozenBytes.reduce((sum, model) => sum + model.bytes, 0)
  if (input.trainedBytes + allFrozen <= input.capacityBytes || input.gpus <= 1) {
    return {
      strategy: 'replicas',
      frozenBytesOnTrainingGpu: allFrozen,
      devices: Array.from({ length: Math.max(1, input.gpus) }, (_, device) => ({
        device,
        models: [input.trainedId, ...frozenBytes.map((model) => model.id)],
        frozenBytes: allFrozen,
      })),
      fits: input.trainedBytes + allFrozen <= input.capacityBytes,
    }
  }
  const devices = Array.from({ length: input.gpus }, (_, device) => ({
    device,
    models: device === 0 ? [input.trainedId] : ([] as string[]),
    frozenBytes: 0,
    used: device === 0 ? input.trainedBytes : 0,
  }))
  let fits = true
  for (const model of [...frozenBytes].sort((a, b) => b.bytes - a.bytes)) {
    const target =
      devices.slice(1).find((device) => device.used + model.bytes <= input.capacityBytes) ??
      (devices[0] && devices[0].used + model.bytes <= input.capacityBytes ? devices[0] : undefined)
    const chosen = target ?? devices.reduce((least, device) => (device.used < least.used ? device : least))
    if (!target) fits = false
    chosen.models.push(model.id)
    chosen.frozenBytes += model.bytes
    chosen.used += model.bytes
  }
  return {
    strategy: 'model-split',
    frozenBytesOnTrainingGpu: devices[0]?.frozenBytes ?? 0,
    devices: devices.map(({ device, models, frozenBytes: bytes }) => ({
      device,
      models,
      frozenBytes: bytes,
    })),
    fits,
  }
}
