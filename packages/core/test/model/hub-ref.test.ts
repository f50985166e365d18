import { describe, expect, it } from 'vitest'
import { isRigfitError } from '../../src/errors.js'
import {
  hubCacheFolderName,
  isCommitHash,
  parseHubModelRef,
  repoOfHubCacheFolder,
} from '../../src/model/hub-ref.js'

describe('parseHubModelRef', () => {
  it.each([
    ['Qwen/Qwen2.5-7B-Instruct', 'Qwen/Qwen2.5-7B-Instruct', 'main', false],
    ['meta-llama/Llama-3.1-70B@main', 'meta-llama/Llama-3.1-70B', 'main', true],
    ['org/name@v1.0', 'org/name', 'v1.0', true],
    ['org/name@refs/pr/1', 'org/name', 'refs/pr/1', true],
    [`org/name@${'a'.repeat(40)}`, 'org/name', 'a'.repeat(40), true],
    ['  org/m_1.2  ', 'org/m_1.2', 'main', false],
  ])('%s is repo %s at %s', (text, repo, revision, pinned) => {
    expect(parseHubModelRef(text)).toEqual({ repo, revision, pinned })
  })

  it.each([
    'llama-3.1-8b',
    './model',
    '/abs/model',
    'a/b/c',
    'org/config.json',
    'org--x/name',
    'org/na..me',
    '../x',
    'org/',
    '/name',
  ])('%s is not a Hub id', (text) => {
    expect(parseHubModelRef(text)).toBeNull()
  })

  it.each(['org/name@', 'org/name@../x', 'org/name@a b', 'org/name@/main'])(
    '%s is refused naming the revision',
    (text) => {
      let caught: unknown
      try {
        parseHubModelRef(text)
      } catch (error) {
        caught = error
      }
      expect(isRigfitError(caught) && caught.code).toBe('E_HUB_REVISION')
    },
  )

  it('tells commits from branch names', () => {
    expect(isCommitHash('0123456789abcdef0123456789abcdef01234567')).toBe(true)
    expect(isCommitHash('main')).toBe(false)
    expect(isCommitHash('0123456789ABCDEF0123456789abcdef01234567')).toBe(false)
  })

  it('names cache folders as huggingface_hub does, and reads them back', () => {
    for (const repo of ['Qwen/Qwen2.5-7B-Instruct', 'meta-llama/Llama-3.1-8B', 'a/b']) {
      expect(repoOfHubCacheFolder(hubCacheFolderName(repo))).toBe(repo)
    }
    expect(hubCacheFolderName('Qwen/Qwen2.5-7B')).toBe('models--Qwen--Qwen2.5-7B')
    expect(repoOfHubCacheFolder('datasets--a--b')).toBeNull()
    expect(repoOfHubCacheFolder('.locks')).toBeNull()
  })
})
