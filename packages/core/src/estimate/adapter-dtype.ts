import type { EstimateInput } from '../schemas/index.js'

/**
 * Do the LoRA adapters of this run train in fp32 beside a 16-bit base? PEFT (0.12 and later,
 * `autocast_adapter_dtype=True`) upcasts the adapters of an fp16 or bf16 model to fp32, and each adapted layer
 * casts its input to the adapter's type (`_cast_input_dtype`), so every adapter keeps its own fp32 copy of that
 * input for backward and its weights, gradients and optimizer states are fp32. Under autocast and in fp32 the
 * adapters are fp32 anyway and the working model decides the rest; LitGPT keeps them in the model's type.
 */
export function adaptersInFp32(input: Pick<EstimateInput, 'lora' | 'precision' | 'adapterDtype'>): boolean {
  return (
    input.lora !== null &&
    input.adapterDtype === 'fp32' &&
    (input.precision === 'bf16-true' || input.precision === 'fp16-true')
  )
}
