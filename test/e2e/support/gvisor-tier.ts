// Setup of the e2e-gvisor jest project: the suites it runs start their platform with the
// gvisor tier as every session's (support/platform.ts reads E2E_TIER).
process.env.E2E_TIER = 'gvisor';
