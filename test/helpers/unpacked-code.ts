// Code for Platform.uploadCode in tests: the files zipped and unpacked the way /v1 unpacks an upload.
import os from 'node:os';
import { unpackZip } from '../../src/http/read-zip.ts';
import { writeZip } from '../../src/http/write-zip.ts';
import type { CodeFile, UnpackedCode } from '../../src/platform/types.ts';

export function unpacked(files: readonly CodeFile[], into = os.tmpdir()): Promise<UnpackedCode> {
  return unpackZip(writeZip([...files]), into);
}
