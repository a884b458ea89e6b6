import { Logger as GraphileLogger, type LogLevel } from 'graphile-worker';
import type { Logger } from 'pino';

/**
 * graphile-worker's log lines as pino objects. Its routine chatter (a task started or completed) goes to
 * debug; what an operator must see (a failed task, a lost connection) keeps its level. Its failure lines
 * carry the task's error message, which this tool redacts before throwing. A task `given(taskId)` says is
 * given back (a stop interrupted it) is no failure: its line goes to debug.
 */
export function graphileLogger(logger: Logger, given: (taskId: string) => boolean = () => false): GraphileLogger {
  return new GraphileLogger((scope) => (level: LogLevel, message: string) => {
    const fields = {
      msg: message,
      source: 'graphile-worker',
      ...(scope.workerId && { worker: scope.workerId }),
      ...(scope.taskIdentifier && { task: scope.taskIdentifier }),
      ...(scope.jobId && { taskId: scope.jobId }),
    };
    // its failure line names the task in its text ('Failed task 42 (…'), not in its scope
    const taskId = scope.jobId ?? /^Failed task (\d+) \(/.exec(message)?.[1];
    if (taskId !== undefined && given(String(taskId))) logger.debug(fields);
    else if (level === 'error') logger.error(fields);
    else if (level === 'warning') logger.warn(fields);
    else logger.debug(fields);
  });
}
