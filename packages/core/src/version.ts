/** rigfit's version, recorded in every profile and plan it writes. */
export const RIGFIT_VERSION = '0.1.0'
