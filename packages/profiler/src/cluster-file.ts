import {
  CLUSTER_PROFILE_SCHEMA_VERSION,
  ClusterProfile,
  type HardwareProfile,
  RigfitError,
} from '@rigfit/core'
import { DEFAULT_INPUT_TIMEOUT_MS } from '@rigfit/core/node'
import {
  parseProfileJson,
  profileFromJson,
  readProfileText,
  validDocument,
  writeProfileJson,
} from './profile-file.js'

/** A saved profile of either kind: one machine, or a cluster of them (`rigfit profile --slurm`). */
export type ProfileDocument =
  | { kind: 'node'; profile: HardwareProfile }
  | { kind: 'cluster'; cluster: ClusterProfile }

/** Parses a cluster profile's JSON text; `path` names it in errors. */
export function parseClusterProfileText(json: unknown, path: string): ClusterProfile {
  const version = (json as { schemaVersion?: unknown }).schemaVersion
  if (version !== CLUSTER_PROFILE_SCHEMA_VERSION) {
    throw new RigfitError(
      'validation',
      'E_CLUSTER_VERSION',
      `${path}: cluster profile schemaVersion ${String(version)} is not supported (this rigfit reads ${CLUSTER_PROFILE_SCHEMA_VERSION}).`,
      {
        suggestion:
          'Profile the cluster again with this version: `rigfit profile --slurm --out cluster.json`.',
      },
    )
  }
  return validDocument(ClusterProfile, json, {
    code: 'E_CLUSTER_INVALID',
    what: `${path} is not a valid cluster profile`,
    suggestion:
      'Fix the field named above, or profile the cluster again with `rigfit profile --slurm --out cluster.json`.',
  })
}

/** Reads a saved profile, telling a cluster profile (`"kind": "cluster"`) from a machine's by its content. */
export async function loadProfileDocument(
  path: string,
  timeoutMs = DEFAULT_INPUT_TIMEOUT_MS,
): Promise<ProfileDocument> {
  const json = parseProfileJson(await readProfileText(path, timeoutMs), path)
  if (typeof json === 'object' && json !== null && (json as { kind?: unknown }).kind === 'cluster') {
    return { kind: 'cluster', cluster: parseClusterProfileText(json, path) }
  }
  return { kind: 'node', profile: profileFromJson(json, path) }
}

/** Writes a cluster profile as JSON atomically; an existing file is replaced only with `force`. */
export async function saveClusterProfile(
  path: string,
  cluster: ClusterProfile,
  options: { force?: boolean } = {},
): Promise<void> {
  await writeProfileJson(path, ClusterProfile.parse(cluster), options.force ?? false)
}
