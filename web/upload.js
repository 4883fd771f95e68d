/* upload.js: uploads from the list view - files and perf.data
 * directories, dropped or picked, streamed with a progress bar. */
(function () {
  'use strict';
  const F = window.PerfhubFlame;
  const U = window.PerfhubUI;
  const { $, showMessage, token, qs } = U;

  /* Streams a file to POST /api/v1/profiles with a progress bar; the
   * server answers 202 (queued) or 200 (already stored). */
  function upload(file, type) {
    return new Promise((resolve, reject) => {
      const name = $('#upload-name').value.trim() || file.name;
      const tags = $('#upload-tags').value.split(/[,\s]+/).filter(Boolean);
      const xhr = new XMLHttpRequest();
      const bar = $('#upload-progress');
      const st = $('#upload-status');
      xhr.open('POST', U.API + 'profiles' + qs({ name: name, tag: tags }));
      xhr.setRequestHeader('Content-Type', type || 'application/octet-stream');
      const t = token();
      if (t) xhr.setRequestHeader('Authorization', 'Bearer ' + t);
      bar.hidden = false;
      bar.value = 0;
      st.textContent = 'uploading ' + file.name;
      xhr.upload.onprogress = (e) => {
        if (e.lengthComputable) {
          bar.value = (100 * e.loaded) / e.total;
          st.textContent = file.name + ': ' + F.fmtBytes(e.loaded) + ' of ' + F.fmtBytes(e.total);
        }
      };
      xhr.onerror = () => { st.textContent = 'upload failed: network error'; reject(new Error('network error')); };
      xhr.onload = () => {
        let j = null;
        try { j = JSON.parse(xhr.responseText); } catch (e) { j = null; }
        if (xhr.status === 200 || xhr.status === 202) {
          bar.value = 100;
          st.textContent = file.name + (xhr.status === 200 ? ': already stored as ' : ': queued as ') + (j && j.id);
          resolve(j);
        } else {
          const msg = (j && j.error) || 'HTTP ' + xhr.status;
          st.textContent = file.name + ': ' + msg;
          reject(new Error(msg));
        }
      };
      xhr.send(file);
    });
  }

  /* A perf.data directory (perf record --threads, --kcore) goes up as one
   * tar: [{path, file}] with paths under the directory's own name. The
   * Blob only references the files; nothing is read into memory here. */
  function tarBlob(dirName, items) {
    const now = Math.floor(Date.now() / 1000);
    const dirs = new Set([dirName]);
    for (const it of items) {
      const parts = it.path.split('/');
      for (let i = 1; i < parts.length; i++) dirs.add(parts.slice(0, i).join('/'));
    }
    const entries = Array.from(dirs).sort().map((d) => ({ name: d, size: -1, mtime: now }));
    for (const it of items.slice().sort((a, b) => (a.path < b.path ? -1 : 1))) {
      entries.push({ name: it.path, size: it.file.size, mtime: Math.floor((it.file.lastModified || Date.now()) / 1000), data: it.file });
    }
    const blob = new Blob(F.tarParts(entries), { type: 'application/x-tar' });
    blob.name = dirName;
    return blob;
  }

  /* The files under a dropped directory entry, with their paths. */
  function readDir(entry) {
    const out = [];
    const walk = (e) => new Promise((resolve, reject) => {
      if (e.isFile) {
        e.file((f) => { out.push({ path: e.fullPath.replace(/^\//, ''), file: f }); resolve(); }, reject);
        return;
      }
      const r = e.createReader();
      const batch = () => r.readEntries((list) => {
        if (!list.length) { resolve(); return; }
        Promise.all(list.map(walk)).then(batch, reject);
      }, reject);
      batch();
    });
    return walk(entry).then(() => out);
  }

  /* uploads: [{blob, type}] one after the other */
  async function uploadFiles(files) {
    let last = null;
    for (const f of files) {
      const blob = f.blob || f;
      try { last = await upload(blob, f.type); } catch (e) { showMessage('Upload of ' + blob.name + ' failed: ' + e.message); return; }
    }
    if (files.length === 1 && last && last.id !== undefined) U.go({ view: 'profile', id: String(last.id), params: {} });
    else U.views.list.load(U.state.params);
  }

  /* The drop zone, the file and directory pickers. */
  function init() {
    const drop = $('#drop');
    drop.addEventListener('dragover', (e) => { e.preventDefault(); drop.classList.add('over'); });
    drop.addEventListener('dragleave', () => drop.classList.remove('over'));
    drop.addEventListener('drop', async (e) => {
      e.preventDefault();
      drop.classList.remove('over');
      const dt = e.dataTransfer;
      if (!dt) return;
      /* directories come as entries; files as files */
      const entries = Array.from(dt.items || []).map((it) => (it.webkitGetAsEntry ? it.webkitGetAsEntry() : null));
      if (entries.some((en) => en && en.isDirectory)) {
        const ups = [];
        try {
          for (const en of entries) {
            if (!en) continue;
            if (en.isDirectory) ups.push({ blob: tarBlob(en.name, await readDir(en)), type: 'application/x-tar' });
            else ups.push({ blob: await new Promise((res, rej) => en.file(res, rej)) });
          }
        } catch (err) {
          showMessage('Could not read the dropped directory: ' + err.message);
          return;
        }
        uploadFiles(ups);
      } else if (dt.files && dt.files.length) {
        uploadFiles(Array.from(dt.files));
      }
    });
    $('#dir').addEventListener('change', (e) => {
      const files = Array.from(e.target.files);
      e.target.value = '';
      if (!files.length) return;
      const items = files.map((f) => ({ path: f.webkitRelativePath || f.name, file: f }));
      const top = items[0].path.split('/')[0];
      uploadFiles([{ blob: tarBlob(top, items), type: 'application/x-tar' }]);
    });
    drop.addEventListener('keydown', (e) => { if (e.key === 'Enter' && e.target === drop) $('#file').click(); });
    $('#file').addEventListener('change', (e) => { if (e.target.files.length) uploadFiles(Array.from(e.target.files)); e.target.value = ''; });
  }

  U.initUpload = init;
})();
