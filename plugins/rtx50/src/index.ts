import { fileURLToPath } from 'node:url'

/** The plugin's root folder: rules/, docs/, catalog.json and fixtures/ live there. */
export const packRoot = fileURLToPath(new URL('..', import.meta.url))
