"use strict";
// The live table: every server-sent event is the whole state of the table (a phone that
// reconnects is up to date with the first one), drawn into the page and its data attributes.
(function () {
  const body = document.body;
  const $ = (id) => document.getElementById(id);
  const drawn = { board: "", dice: "" };

  function cell(text, tag) {
    const el = document.createElement(tag || "td");
    el.textContent = text;
    return el;
  }

  function badge(player) {
    const el = document.createElement("span");
    el.className = "badge";
    el.dataset.player = player;
    el.textContent = "P" + player;
    return el;
  }

  function show(s) {
    body.dataset.seq = s.seq;
    body.dataset.game = s.game;
    body.dataset.toMove = s.to_move;
    body.dataset.link = s.link;
    body.dataset.urgent = s.urgent;
    body.dataset.steps = s.steps;
    body.dataset.over = s.ranking.length > 0;
    $("message").textContent = s.message;
    // A setup being laid out: the board at full size, the cells still to fill counted.
    body.dataset.settingUp = s.to_fill > 0;
    $("to-fill").textContent = s.to_fill > 0
      ? s.to_fill + (s.to_fill === 1 ? " cell" : " cells") + " still to fill" : "";
    $("board-link").textContent = s.link_words;
    // The board is drawn again only when it changed (a prompt or a score alone does not).
    if (s.board !== drawn.board) $("board").innerHTML = drawn.board = s.board;
    if (s.dice !== drawn.dice) $("dice").innerHTML = drawn.dice = s.dice;
    const menu = $("menu");
    menu.replaceChildren(...s.menu.map((choice, i) => {
      const li = cell(choice, "li");
      li.setAttribute("aria-current", i === s.menu_index);
      return li;
    }));
    const ranks = new Map(s.ranking.map(([player, result], i) => [player, [i + 1, result]]));
    const rows = (s.ranking.length ? s.ranking : s.scores).map(([player, text]) => {
      const tr = document.createElement("tr");
      const rank = ranks.has(player) ? String(ranks.get(player)[0]) : "";
      tr.dataset.player = player;
      tr.dataset.score = text;
      tr.dataset.rank = rank;
      tr.dataset.toMove = player === s.to_move;
      const who = document.createElement("td");
      who.append(badge(player));
      tr.append(who, cell(text), cell(rank));
      return tr;
    });
    $("players").tBodies[0].replaceChildren(...rows);
    const extra = $("extra");
    extra.replaceChildren(...Object.entries(s.extra).flatMap(([k, v]) => [cell(k, "dt"), cell(v, "dd")]));
    $("steps").textContent = s.steps + (s.steps === 1 ? " step" : " steps") + " played";
    if (s.record) {  // live: the steps so far and the chart of the scores
      $("stepper").hidden = false;
      $("record-steps").replaceChildren(cell("setup", "li"), ...s.record.map(
        ([player, step]) => cell("P" + player + " " + step, "li")));
      $("chart").innerHTML = s.chart;
    }
    window.dispatchEvent(new CustomEvent("snapshot", { detail: s.seq }));
  }

  // A game record stepped through with the buttons, the slider, the list of steps or the
  // arrow keys: a file's, or on the live page the game so far or a finished game, local to
  // this page (the table goes on; "Live" follows it again).
  const slider = $("record-at");
  let browsing = null;  // { positions, items, at } while stepping through a record
  function browse(game) {
    slider.max = game.positions.length - 1;
    const items = game.positions.map((s, i) => {
      const li = cell(i ? (s.to_move ? "P" + s.to_move + " " : "") + s.step : "setup", "li");
      li.addEventListener("click", () => go(i));
      return li;
    });
    $("record-steps").replaceChildren(...items);
    $("chart").innerHTML = game.chart;
    browsing = { positions: game.positions, items, at: 0 };
    body.dataset.browsing = game.name || "game";
  }
  function go(i) {
    if (!browsing || !browsing.positions.length) return;
    const at = browsing.at = Math.max(0, Math.min(browsing.positions.length - 1, i));
    body.dataset.at = at;
    slider.value = at;
    browsing.items.forEach((li, n) => li.setAttribute("aria-current", n === at));
    const cursor = document.getElementById("chart-cursor");
    if (cursor) {
      const x = Number(cursor.dataset.left) + at * Number(cursor.dataset.step);
      cursor.setAttribute("x1", x);
      cursor.setAttribute("x2", x);
    }
    show(browsing.positions[at]);
  }
  const moves = { first: () => 0, back: () => browsing.at - 1, next: () => browsing.at + 1,
                  last: () => browsing.positions.length - 1 };
  let following = false;  // the live page: what the table shows now, when not browsing
  let latest = null;
  async function open(address) {
    const said = $("browse-said");
    try {
      const answer = await fetch(address);
      if (!answer.ok) {
        said.textContent = answer.statusText;
        return false;
      }
      browse(await answer.json());
      said.textContent = "";
      return true;
    } catch (error) {
      said.textContent = "not read: the connection is lost";
      return false;
    }
  }
  for (const button of document.querySelectorAll("#stepper [data-go]")) {
    button.addEventListener("click", async () => {
      // Following the table, a step opens the game so far at its last position first.
      if (!browsing && following) {
        if (!(await open("record"))) return;
        browsing.at = browsing.positions.length - 1;
      }
      if (browsing) go(moves[button.dataset.go]());
    });
  }
  slider.addEventListener("input", () => go(Number(slider.value)));
  document.addEventListener("keydown", (event) => {
    if (event.key === "ArrowLeft") go(browsing ? browsing.at - 1 : 0);
    if (event.key === "ArrowRight") go(browsing ? browsing.at + 1 : 0);
  });

  function connection(state, words) {
    body.dataset.connection = state;
    $("connection").textContent = words;
  }

  const record = JSON.parse($("record").textContent || "null");
  if (record) {  // a game record in a file: nothing else to follow
    connection("record", record.over ? "game record" : "game in progress");
    $("stepper").hidden = false;
    $("controls").hidden = true;
    browse(record);
    go(record.positions.length - 1);
    return;
  }
  following = true;
  $("browse").hidden = false;
  $("live").addEventListener("click", () => {
    browsing = null;
    delete body.dataset.browsing;
    delete body.dataset.at;
    if (latest) show(latest);
  });
  const games = $("games");
  games.addEventListener("toggle", async () => {
    if (!games.open) return;
    const answer = await fetch("journals").catch(() => null);
    if (!answer || !answer.ok) return;
    const { journals } = await answer.json();
    $("journals").replaceChildren(...journals.map((name) => {
      const li = document.createElement("li");
      const button = cell(name.replace(/\.jsonl$/, ""), "button");
      button.type = "button";
      button.dataset.journal = name;
      button.addEventListener("click", async () => {
        if (await open("journals/" + encodeURIComponent(name))) go(browsing.positions.length - 1);
      });
      li.append(button);
      return li;
    }));
  });
  // The buttons: a press goes to the companion with the PIN its matrix shows, and becomes
  // the same button press as at the table; without the PIN the page only watches.
  const pin = $("pin");
  pin.value = sessionStorage.getItem("pin") || "";
  pin.addEventListener("change", () => sessionStorage.setItem("pin", pin.value));
  for (const button of document.querySelectorAll("#controls [data-button]")) {
    button.addEventListener("click", async () => {
      const said = $("pressed");
      let words, refused = true;
      try {
        const answer = await fetch("press", {
          method: "POST", headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ pin: pin.value, button: button.dataset.button }),
        });
        refused = !answer.ok;
        words = answer.ok ? button.textContent + " pressed" : answer.statusText;
      } catch (error) {
        words = "not sent: the connection is lost";
      }
      said.dataset.refused = refused;
      said.textContent = words;
    });
  }

  // A new game of the game this board is built for, behind the same PIN; one in progress
  // is ended only once the box saying so is ticked.
  (async () => {
    const answer = await fetch("game").catch(() => null);
    if (!answer || !answer.ok) return;
    const form = await answer.json();
    const name = form.game.charAt(0).toUpperCase() + form.game.slice(1);
    $("new-game-for").textContent = "Gardens of " + name +
      ": the board is built for this game alone.";
    $("new-players").value = form.players;
    $("new-seed").value = form.seed;
    $("new-names").value = form.names.join(", ");
    $("new-seats").value = form.seats;
    $("new-strengths").replaceChildren(...form.strengths.map((strength) => {
      const option = document.createElement("option");
      option.value = strength;
      return option;
    }));
    $("new-options").replaceChildren(...form.options.map(([option, value]) => {
      const label = cell(option.replaceAll("_", " ") + " ", "label");
      const input = document.createElement("input");
      input.dataset.option = option;
      input.dataset.kind = typeof value;
      if (typeof value === "boolean") {
        input.type = "checkbox";
        input.checked = value;
      } else {
        input.type = typeof value === "number" ? "number" : "text";
        input.value = value;
      }
      label.append(input);
      return label;
    }));
    // Reserves dealt by hand: a row of colour counts per player, as many rows as players.
    const reserves = () => {
      const rows = Math.max(0, Math.min(9, Number($("new-players").value) || 0));
      $("new-reserves").querySelector("tbody").replaceChildren(
        ...Array.from({ length: rows }, (_, index) => {
          const row = document.createElement("tr");
          row.append(cell("P" + (index + 1), "th"), ...form.colours.map((colour) => {
            const input = document.createElement("input");
            Object.assign(input, { type: "number", min: 0, title: colour });
            input.dataset.player = index + 1;
            input.dataset.colour = colour;
            const box = document.createElement("td");
            box.append(input);
            return box;
          }));
          return row;
        }));
    };
    if (form.colours.length) {
      const head = document.createElement("tr");
      head.append(cell("", "th"), ...form.colours.map((colour) => cell(colour, "th")));
      $("new-reserves").querySelector("thead").replaceChildren(head);
      $("new-players").addEventListener("input", reserves);
      reserves();
      $("new-reserves").hidden = false;
    }
    $("new-game").hidden = false;
  })();
  $("new-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const options = {};
    for (const input of document.querySelectorAll("#new-options [data-option]")) {
      const kind = input.dataset.kind;
      options[input.dataset.option] = kind === "boolean" ? input.checked
        : kind === "number" ? Number(input.value) : input.value;
    }
    // No count typed in: the companion deals the reserves; any: every player's as typed.
    const counts = [...document.querySelectorAll("#new-reserves input")];
    let reserves = null;
    if (counts.some((input) => input.value !== "")) {
      reserves = [];
      for (const input of counts) {
        const player = Number(input.dataset.player) - 1;
        reserves[player] = reserves[player] || {};
        reserves[player][input.dataset.colour] = Number(input.value || 0);
      }
    }
    const said = $("new-said");
    let words, refused = true;
    try {
      const answer = await fetch("new", {
        method: "POST", headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ pin: pin.value, players: Number($("new-players").value),
                               seed: Number($("new-seed").value || 0), options, reserves,
                               names: $("new-names").value.split(",").map(n => n.trim()),
                               seats: $("new-seats").value, end: $("new-end").checked }),
      });
      const reply = await answer.json().catch(() => ({ refused: answer.statusText }));
      refused = !answer.ok;
      words = answer.ok ? "new game started" : reply.refused;
      if (answer.status === 409) $("new-end-label").hidden = false;
      if (answer.ok) {
        $("new-end").checked = false;
        $("new-end-label").hidden = true;
      }
    } catch (error) {
      words = "not sent: the connection is lost";
    }
    said.dataset.refused = refused;
    said.textContent = words;
  });

  const source = new EventSource("events");
  source.onopen = () => connection("open", "live");
  // EventSource reconnects by itself; the first event after it is the whole table again.
  source.onerror = () => connection("lost", "connection lost: reconnecting…");
  source.onmessage = (event) => {
    latest = JSON.parse(event.data);
    if (!browsing) show(latest);
  };
})();
