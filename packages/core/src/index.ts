export * from './schemas/index.js'
export * from './errors.js'
export * from './version.js'
