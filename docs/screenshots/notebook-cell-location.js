// Makes docs/screenshots/notebook-cell-location.png: a wrong 3.1 that raises, run in a real
// JupyterLab and checked with grader.check("3.1"), its message naming "cell In [2], line 7".
//
// Chromium drives JupyterLab as a student would: the notebook opens, its cells are run with
// Shift+Enter, and the cells are captured once the check's result is shown. What it needs:
//   - JupyterLab (4.6 was used) in a venv of its own, and a kernel of the project's venv:
//       python3 -m venv /tmp/jl && /tmp/jl/bin/pip install jupyterlab
//       .venv/bin/python -m ipykernel install --prefix /tmp/jl --name grader-venv
//     with line numbers on: /tmp/jl/share/jupyter/lab/settings/overrides.json holding
//       {"@jupyterlab/notebook-extension:tracker": {"codeCellConfig": {"lineNumbers": true}}}
//   - playwright-core from npm and Debian's chromium (/usr/bin/chromium).
// Then, with a new server (and a new IPYTHONDIR: IPython's history numbers the cells):
//   IPYTHONDIR=DIR/.ipython /tmp/jl/bin/jupyter lab --no-browser --port 8899 \
//     --ServerApp.token=shot --notebook-dir DIR &
//   NODE_PATH=.../node_modules node docs/screenshots/notebook-cell-location.js DIR OUT.png
const fs = require('fs');
const path = require('path');
const { chromium } = require('playwright-core');

const [dir, out] = process.argv.slice(2);
const code = (text) => ({ cell_type: 'code', metadata: {}, execution_count: null, outputs: [],
                          source: text });
fs.writeFileSync(path.join(dir, 'chapter3.ipynb'), JSON.stringify({
  nbformat: 4, nbformat_minor: 5,
  metadata: { kernelspec: { name: 'grader-venv', display_name: 'Python 3 (grader)',
                            language: 'python' } },
  cells: [
    { cell_type: 'markdown', metadata: {}, source: '## Exercise 3.1: weight transfer' },
    code('import torch\nimport grader'),
    code('# Exercise 3.1: give sa_v1 the weights of sa_v2\nimport torch\n\n\n' +
         'def transfer_weights(sa_v2, sa_v1):\n    with torch.no_grad():\n' +
         '        sa_v1.W_query.copy_(sa_v2.W_query.weight)\n' +  // line 7: raises
         '        sa_v1.W_key.copy_(sa_v2.W_key.weight)\n' +
         '        sa_v1.W_value.copy_(sa_v2.W_value.weight)'),
    code('grader.check("3.1")'),
  ].map((c, i) => ({ id: `cell-${i}`, ...c })),
}, null, 1));

(async () => {
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--hide-scrollbars',
           '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const page = await browser.newPage({ viewport: { width: 1060, height: 1400 } });
  await page.goto('http://127.0.0.1:8899/lab/tree/chapter3.ipynb?token=shot');
  await page.waitForSelector('.jp-Notebook .jp-CodeCell', { timeout: 180000 });
  // the kernel started and connected (the status bar says so), as a student waits for it:
  // a cell run before that is lost
  await page.waitForFunction(
    () => /\| Idle/.test(document.querySelector('.jp-StatusBar-Widget')?.innerText ?? '') &&
          /\| Idle/.test(document.body.innerText),
    null, { timeout: 180000 });
  await page.waitForTimeout(2000);
  const leftOpen = () => page.evaluate(() => {  // the file browser, closed for room
    const stack = document.querySelector('#jp-left-stack');
    return !!stack && !stack.classList.contains('lm-mod-hidden') && stack.offsetWidth > 0;
  });
  if (await leftOpen()) await page.keyboard.press('Control+b');
  await page.waitForTimeout(800);
  const cells = page.locator('.jp-Notebook .jp-CodeCell');
  await cells.nth(0).locator('.cm-content').click();
  for (let i = 0; i < 3; i++) {
    await page.keyboard.press('Shift+Enter');
    await page.waitForTimeout(300);
  }
  await page.waitForFunction(
    () => document.querySelectorAll('.jp-Notebook .jp-CodeCell')[2].innerText.includes('failed'),
    null, { timeout: 300000 }).catch(async (e) => {
    await page.screenshot({ path: `${out}.failed.png` });  // what the page showed instead
    throw e;
  });
  await page.waitForSelector('.jp-Notebook-ExecutionIndicator[data-status="idle"]',
                             { timeout: 180000 });
  await page.mouse.click(1050, 1390);  // away from the cells: no hover, no caret in a cell
  await page.waitForTimeout(800);
  const prompts = await cells.locator('.jp-InputPrompt').allInnerTexts();
  if (!prompts.slice(0, 3).every((p) => /\d/.test(p))) throw new Error(`not all run: ${prompts}`);
  const first = await cells.nth(0).boundingBox();
  const last = await cells.nth(2).boundingBox();
  const text = await cells.nth(2).innerText();
  const count = (await cells.nth(1).locator('.jp-InputPrompt').innerText()).match(/\d+/)[0];
  if (!text.includes(`(in cell In [${count}], line 7, in transfer_weights: `)) {
    await page.screenshot({ path: `${out}.failed.png` });
    throw new Error(`the check does not name In [${count}], line 7:\n${text}`);
  }
  const x = Math.max(0, first.x - 8);
  await page.screenshot({ path: out, clip: { x, y: first.y - 8, width: first.x + first.width + 8 - x,
                                             height: last.y + last.height - first.y + 14 } });
  await browser.close();
})().catch((e) => { console.error(e); process.exit(1); });
