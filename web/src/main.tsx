import { render } from "preact";
import "./styles.css";
import { App } from "./app";
import { registerServiceWorker } from "./offline";

render(<App />, document.getElementById("root")!);
registerServiceWorker();
