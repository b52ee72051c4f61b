// Starts real voxserve processes for the browser test: a free port each (--port 0, read back from
// the log), gRPC off (its fixed default port would collide), ready before the test uses them.
import { spawn } from 'node:child_process';

const START_TIMEOUT_MS = 30_000;  // espeak loads in well under a second; a loaded CI machine is slow

export async function startServer(bin, extraArgs = []) {
  const child = spawn(bin, ['--host', '127.0.0.1', '--port', '0', '--grpc-enabled', 'false', ...extraArgs],
                      { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`voxserve did not start:\n${log}`)), START_TIMEOUT_MS);
    const onData = (data) => {
      log += data;
      const listening = /listening on (http:\/\/[0-9.]+:\d+)/.exec(log);
      if (listening && /^\S+ \S+ info\s+ready$/m.test(log)) {
        clearTimeout(timer);
        resolve(listening[1]);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`voxserve exited (${code}):\n${log}`)); });
  });
  return {
    url,
    log: () => log,
    // SIGTERM drains and exits 0; anything else (a crash, a sanitizer report) throws with the log.
    async stop() {
      const code = child.exitCode ?? await new Promise((resolve) => {
        child.on('exit', (exitCode, signal) => resolve(exitCode ?? signal));
        child.kill('SIGTERM');
      });
      if (code !== 0) throw new Error(`voxserve exited with ${code}:\n${log}`);
    },
  };
}
