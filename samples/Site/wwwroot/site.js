// samples/Site: the home page's live parts. The guestbook comes from the JSON API through
// fetch, the clock over Server-Sent Events, the chat over a WebSocket. Text from the server is
// put in with textContent, never innerHTML, so a message cannot inject markup.
"use strict";

document.addEventListener("DOMContentLoaded", () => {
  const latest = document.getElementById("latest");
  if (latest) loadLatest(latest);
  const clock = document.getElementById("clock");
  if (clock) startClock(clock);
  const chat = document.getElementById("chat-form");
  if (chat) startChat(chat);
});

function item(name, text) {
  const li = document.createElement("li");
  const who = document.createElement("strong");
  who.textContent = name;
  li.append(who, ": " + text);
  return li;
}

async function loadLatest(list) {
  try {
    const response = await fetch("/api/entries?limit=5", { headers: { Accept: "application/json" } });
    if (!response.ok) throw new Error(response.status);
    const entries = await response.json();
    list.replaceChildren(...entries.map((e) => item(e.name, e.message)));
    if (entries.length === 0) list.replaceChildren(Object.assign(document.createElement("li"), { className: "muted", textContent: "No entries yet: be the first." }));
  } catch (error) {
    list.replaceChildren(Object.assign(document.createElement("li"), { className: "error", textContent: "Could not load the guestbook." }));
  }
}

function startClock(clock) {
  // EventSource reconnects by itself when the stream drops.
  const events = new EventSource("/clock");
  events.addEventListener("tick", (event) => {
    clock.dateTime = event.data;
    clock.textContent = new Date(event.data).toLocaleTimeString("en-GB", { timeZone: "UTC" }) + " UTC";
  });
}

function startChat(form) {
  const log = document.getElementById("chat-log");
  const status = document.getElementById("chat-status");
  const input = document.getElementById("chat-input");
  let socket;

  function connect() {
    socket = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/chat");
    socket.addEventListener("open", () => (status.textContent = "connected"));
    socket.addEventListener("message", (event) => {
      const line = JSON.parse(event.data);
      log.append(item(line.name, line.text));
      log.scrollTop = log.scrollHeight;
    });
    socket.addEventListener("close", () => {
      status.textContent = "disconnected, reconnecting…";
      setTimeout(connect, 2000);
    });
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (socket.readyState === WebSocket.OPEN && input.value.trim() !== "") {
      socket.send(input.value);
      input.value = "";
    }
  });
  connect();
}
