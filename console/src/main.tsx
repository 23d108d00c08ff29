/** The Shoal console: React, TanStack Query for fetching (polling only what is on screen). */
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { BrowserRouter, Navigate, Route, Routes } from "react-router";
import { ApiError } from "./api";
import { Header } from "./components/Header";
import { BackfillPage } from "./pages/BackfillPage";
import { BackfillsPage } from "./pages/BackfillsPage";
import { EventsPage } from "./pages/EventsPage";
import { InstancePage } from "./pages/InstancePage";
import { InstancesPage } from "./pages/InstancesPage";
import { SchedulePage } from "./pages/SchedulePage";
import { SchedulesPage } from "./pages/SchedulesPage";
import { TaskGroupsPage } from "./pages/TaskGroupsPage";
import { TriggersPage } from "./pages/TriggersPage";
import { WorkflowPage } from "./pages/WorkflowPage";
import { WorkflowsPage } from "./pages/WorkflowsPage";
import "./styles.css";

const client = new QueryClient({
  defaultOptions: {
    queries: {
      // Asked again only when the answer may change by itself (unreachable, 5xx); a 4xx is shown.
      retry: (count, e) =>
        count < 2 && (!(e instanceof ApiError) || e.status === 0 || e.status >= 500),
      refetchOnWindowFocus: true,
      staleTime: 1_000,
    },
  },
});

function NotFound() {
  return (
    <main>
      <p className="error" role="alert">
        No such page. <a href="/">Back to the instances</a>.
      </p>
    </main>
  );
}

createRoot(document.getElementById("root") as HTMLElement).render(
  <StrictMode>
    <QueryClientProvider client={client}>
      <BrowserRouter>
        <Header />
        <Routes>
          <Route path="/" element={<Navigate to="/instances" replace />} />
          <Route path="/instances" element={<InstancesPage />} />
          <Route path="/instances/:id" element={<InstancePage />} />
          <Route path="/workflows" element={<WorkflowsPage />} />
          <Route path="/workflows/:name" element={<WorkflowPage />} />
          <Route path="/schedules" element={<SchedulesPage />} />
          <Route path="/schedules/:id" element={<SchedulePage />} />
          <Route path="/backfills" element={<BackfillsPage />} />
          <Route path="/backfills/:id" element={<BackfillPage />} />
          <Route path="/triggers" element={<TriggersPage />} />
          <Route path="/task-groups" element={<TaskGroupsPage />} />
          <Route path="/events" element={<EventsPage />} />
          <Route path="*" element={<NotFound />} />
        </Routes>
      </BrowserRouter>
    </QueryClientProvider>
  </StrictMode>,
);
