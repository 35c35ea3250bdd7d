import type { NextFunction, Request, Response } from 'express';
import type { PlatformMetrics } from '@drydock/metrics';

// The time of every request, labelled by its route pattern (never its path: ids would
// make a series per session), method and status.
export function requestMetrics(metrics: PlatformMetrics) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const started = performance.now();
    res.once('finish', () => {
      const route = req.route?.path ? `${req.baseUrl}${req.route.path}` : 'unmatched';
      metrics.httpSeconds.observe({ method: req.method, route, status: String(res.statusCode) }, (performance.now() - started) / 1000);
    });
    next();
  };
}
