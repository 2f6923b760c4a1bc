import { defineConfig } from 'vitepress';
import { withMermaid } from 'vitepress-plugin-mermaid';

// The docs site (`npm run docs`, `npm run docs:build`). Pages are plain Markdown that also read well on GitHub;
// links out of docs/ (to the code, the load scenarios, the bench's own README) are checked by
// test/unit/docs/links.test.ts, since VitePress checks only links between its pages.
// withMermaid draws the ```mermaid blocks (the quota cases, the lifecycle) as GitHub does.
export default withMermaid(
  defineConfig({
    title: 'wecom-gateway',
    description: 'A serverless push gateway for WeCom (企业微信) application messages',
    cleanUrls: true,
    lastUpdated: false,
    srcExclude: ['**/README.md'],
    ignoreDeadLinks: [/(^|\/)\.\.\/\.\.\//, /openapi\.json$/],
    markdown: {
      // Inline code is shown as written: `{{alerts.0.labels.alertname}}` is a mustache example, not Vue.
      config(md) {
        const render = md.renderer.rules.code_inline;
        md.renderer.rules.code_inline = (...args) =>
          (render?.(...args) ?? '').replace('<code', '<code v-pre');
      },
    },
    locales: {
      root: { label: 'English', lang: 'en' },
      zh: {
        label: '简体中文',
        lang: 'zh-CN',
        link: '/zh/',
        themeConfig: {
          nav: [
            { text: '快速开始', link: '/zh/getting-started/local' },
            { text: '故障排查', link: '/zh/troubleshooting' },
          ],
          sidebar: [
            {
              text: '快速开始',
              items: [
                { text: '在本地运行', link: '/zh/getting-started/local' },
                { text: '部署到 AWS', link: '/zh/getting-started/deploy' },
                { text: '配置企业微信', link: '/zh/getting-started/wecom-setup' },
              ],
            },
            { text: '故障排查', link: '/zh/troubleshooting' },
            { text: '英文文档', link: '/' },
          ],
        },
      },
    },
    themeConfig: {
      search: { provider: 'local' },
      nav: [
        { text: 'Getting started', link: '/getting-started/local' },
        { text: 'Integrations', link: '/guides/saas-webhooks' },
        { text: 'Troubleshooting', link: '/troubleshooting' },
        { text: 'Reference', link: '/reference/endpoints' },
      ],
      sidebar: [
        {
          text: 'Getting started',
          items: [
            { text: 'Run it locally', link: '/getting-started/local' },
            { text: 'Deploy to AWS', link: '/getting-started/deploy' },
            { text: 'Set up WeCom', link: '/getting-started/wecom-setup' },
          ],
        },
        { text: 'Troubleshooting', link: '/troubleshooting' },
        {
          text: 'Concepts',
          items: [
            { text: 'Message lifecycle', link: '/concepts/lifecycle' },
            { text: 'Apps, keys and scopes', link: '/concepts/apps-and-keys' },
            { text: 'Lanes and priorities', link: '/concepts/lanes' },
            { text: "WeCom's limits", link: '/concepts/limits' },
            { text: 'Duplicates', link: '/concepts/duplicates' },
            { text: 'Config reload', link: '/concepts/config-reload' },
            { text: 'How delivery works', link: '/concepts/delivery' },
            { text: 'The quota engine', link: '/quota' },
            { text: 'Scheduling', link: '/scheduling' },
          ],
        },
        {
          text: 'Guides',
          items: [
            { text: 'Send from code', link: '/guides/send-from-code' },
            { text: 'Group robots (消息推送)', link: '/guides/robots' },
            { text: 'The operator console', link: '/guides/console' },
            { text: 'Callbacks and webhooks to you', link: '/guides/callbacks' },
            { text: 'Idempotency and retries', link: '/guides/idempotency' },
            { text: 'Templates', link: '/templates' },
            { text: 'Long content', link: '/guides/long-content' },
            { text: 'Scheduled sends and quiet hours', link: '/guides/scheduling' },
            { text: 'Template cards and callbacks', link: '/guides/template-cards' },
            { text: 'Verifying webhooks', link: '/guides/verifying-webhooks' },
            { text: 'Markdown in the WeChat plugin', link: '/guides/wechat-plugin-markdown' },
          ],
        },
        {
          text: 'Integrations',
          items: [
            { text: 'Overview: hooks and push keys', link: '/guides/saas-webhooks' },
            { text: 'Alertmanager', link: '/integrations/alertmanager' },
            { text: 'Grafana', link: '/integrations/grafana' },
            { text: 'GitHub', link: '/integrations/github' },
            { text: 'GitLab', link: '/integrations/gitlab' },
            { text: 'Sentry', link: '/integrations/sentry' },
            { text: 'Any JSON (generic)', link: '/integrations/generic' },
            { text: 'One-URL push', link: '/integrations/push' },
          ],
        },
        {
          text: 'Operations',
          items: [
            { text: 'Monitoring and alarms', link: '/operations/monitoring' },
            { text: 'DLQ and redrive', link: '/operations/dlq' },
            { text: 'Rotating keys and secrets', link: '/operations/rotation' },
            { text: 'Cost and scaling', link: '/operations/cost-and-scaling' },
          ],
        },
        {
          text: 'Reference',
          items: [
            { text: 'The API', link: '/reference/endpoints' },
            { text: 'The API in detail', link: '/api' },
            { text: 'HTTP API routes', link: '/reference/http-api' },
            { text: 'Configuration', link: '/reference/configuration' },
            { text: 'Configuration fields', link: '/reference/config-fields' },
            { text: 'Command-line tool', link: '/reference/cli' },
            { text: 'Command-line help', link: '/reference/cli-help' },
            { text: 'Known limits', link: '/limits' },
          ],
        },
        {
          text: 'Development',
          items: [
            { text: 'Architecture', link: '/architecture' },
            { text: 'Project layout', link: '/development/layout' },
            { text: 'Tests', link: '/development/tests' },
            { text: 'The WeCom simulator', link: '/development/simulator' },
            { text: 'Load testing', link: '/development/load-testing' },
            { text: 'Benchmarks', link: '/development/benchmarks' },
          ],
        },
      ],
    },
  }),
);
