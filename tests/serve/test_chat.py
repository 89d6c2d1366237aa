"""The OpenAI-compatible face, called with the `openai` client library against a live server."""
import pytest

openai = pytest.importorskip("openai")

Q = "who wrote [The Narrow Tide]"


@pytest.fixture
def oa(live):
    return openai.OpenAI(base_url=f"{live.url}/v1", api_key="not-needed", max_retries=0, timeout=30)


def test_chat_reply_is_the_answer_in_words_with_its_evidence(oa, live):
    import httpx

    rec = httpx.post(f"{live.url}/v1/answer", json={"question": Q}).json()
    reply = oa.chat.completions.create(model="rra", temperature=0.3, max_tokens=5,  # ignored: the KG answers
                                       messages=[{"role": "system", "content": "be brief"},
                                                 {"role": "user", "content": "hello"},
                                                 {"role": "assistant", "content": "hi"},
                                                 {"role": "user", "content": Q}])
    text = reply.choices[0].message.content
    assert reply.choices[0].finish_reason == "stop" and reply.model == "rra"
    assert text.startswith(", ".join(a["label"] for a in rec["ranked"]))
    assert "Evidence:" in text and "- topic: The Narrow Tide" in text
    assert f"- path: {' -> '.join(rec['paths'][0]['path'])}" in text
    assert "(The Narrow Tide, written_by, " in text
    assert reply.model_extra["rra"]["answers"] == rec["answers"]  # the full record rides along


def test_streamed_chat_gives_the_same_text(oa):
    whole = oa.chat.completions.create(model="rra", messages=[{"role": "user", "content": Q}])
    chunks = list(oa.chat.completions.create(model="rra", messages=[{"role": "user", "content": Q}], stream=True))
    assert chunks[0].choices[0].delta.role == "assistant"
    assert chunks[-1].choices[0].finish_reason == "stop"
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == whole.choices[0].message.content
    assert len(chunks) > 3  # line by line, not one blob


def test_content_parts_and_refusals(oa, live):
    import httpx

    client = httpx.Client(base_url=live.url)
    parts = oa.chat.completions.create(model="rra", messages=[
        {"role": "user", "content": [{"type": "text", "text": Q}]}])
    assert "The Narrow Tide" in parts.choices[0].message.content
    with pytest.raises(openai.UnprocessableEntityError) as err:
        oa.chat.completions.create(model="rra", messages=[{"role": "system", "content": "no user message"}])
    assert "messages" in str(err.value)
    r = client.post("/v1/chat/completions", json={"messages": [{"role": "user", "content": ""}]})
    assert r.status_code == 422 and r.json()["error"]["field"] == "messages[0].content"
    r = client.post("/v1/chat/completions", json={"messages": "who wrote it"})
    assert r.status_code == 422 and r.json()["error"]["field"] == "messages"
    # a question naming no entity gets an explanation in words (a chat front-end shows text, not codes)
    r = client.post("/v1/chat/completions", json={"messages": [{"role": "user", "content": "how are you"}]})
    assert r.status_code == 200 and "no entity of the knowledge graph" in r.json()["choices"][0]["message"]["content"]


def test_models_lists_the_method(oa):
    assert [m.id for m in oa.models.list().data] == ["rra"]
