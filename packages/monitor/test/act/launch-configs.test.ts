import { describe, expect, it } from 'vitest'
import { pointAtCopies } from '../../src/act/launch-configs.js'

const FILES = ['training_args.json', 'ds_config.json', 'launch_deepspeed.sh', 'phase-a/ds_config.json']

describe('pointAtCopies: the relaunch command names the regenerated configs', () => {
  const point = (command: string[], cwd = '/work') =>
    pointAtCopies(command, cwd, 'run', '/logs/attempt-2/configs', FILES)

  it('rewrites words and --flag=value arguments that name an exported file, however the path is spelled', () => {
    expect(
      point([
        'python',
        'train.py',
        'run/training_args.json',
        '--deepspeed_config=./run/ds_config.json',
        '/work/run/phase-a/ds_config.json',
      ]),
    ).toEqual([
      'python',
      'train.py',
      '/logs/attempt-2/configs/training_args.json',
      '--deepspeed_config=/logs/attempt-2/configs/ds_config.json',
      '/logs/attempt-2/configs/phase-a/ds_config.json',
    ])
  })

  it('rewrites the program itself when it is an exported launch script', () => {
    expect(point(['run/launch_deepspeed.sh', 'train.py'])).toEqual([
      '/logs/attempt-2/configs/launch_deepspeed.sh',
      'train.py',
    ])
  })

  it('leaves everything else exactly as given', () => {
    const command = [
      'torchrun',
      '--nproc_per_node=2',
      'run/notes.txt',
      'run/../training_args.json',
      'other/training_args.json',
      '--out=run',
      'run',
      '',
      '-=run/ds_config.json',
    ]
    const out = point(command)
    expect(out.slice(0, 8)).toEqual(command.slice(0, 8))
    // "-=" is a flag with an empty name; its value still names an exported file.
    expect(out[8]).toBe('-=/logs/attempt-2/configs/ds_config.json')
  })

  it('resolves relative paths from the working directory the trainer starts in', () => {
    expect(pointAtCopies(['../run/ds_config.json'], '/work/sub', '/work/run', '/c', FILES)).toEqual([
      '/c/ds_config.json',
    ])
    expect(pointAtCopies(['run/ds_config.json'], '/elsewhere', '/work/run', '/c', FILES)).toEqual([
      'run/ds_config.json',
    ])
  })
})
