import { PlatformMetrics } from './platform-metrics.js';

describe(PlatformMetrics.name, () => {
  it('should render what was counted, after running the scrape collectors', async () => {
    const sut = new PlatformMetrics();
    sut.executions.inc({ tenant: 'ten_a', status: 'ok' });
    sut.executions.inc({ tenant: 'ten_a', status: 'ok' });
    sut.onScrape(async () => sut.sessionsLive.set(3));
    const { contentType, text } = await sut.render();
    expect(contentType).toMatch(/^text\/plain/);
    expect(text).toContain('drydock_executions_total{tenant="ten_a",status="ok"} 2');
    expect(text).toContain('drydock_sessions_live 3');
  });

  it('should still render when a collector fails, with its gauges left as they were', async () => {
    const sut = new PlatformMetrics();
    sut.sandboxesPooled.set({ pool: 'default' }, 2);
    sut.onScrape(async () => {
      throw new Error('redis is down');
    });
    expect((await sut.render()).text).toContain('drydock_sandboxes_pooled{pool="default"} 2');
  });

  it('should keep two instances apart (two apps in one process)', async () => {
    const [a, b] = [new PlatformMetrics(), new PlatformMetrics()];
    a.batchItems.inc({ tenant: 't', status: 'ok' });
    expect((await b.render()).text).not.toContain('drydock_batch_items_total{');
  });
});
