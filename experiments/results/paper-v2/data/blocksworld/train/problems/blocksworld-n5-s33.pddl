; domains.blocksworld.generator: blocks=5, seed=33, split=train
(define (problem blocksworld-n5-s33-train)
  (:domain blocksworld-4ops)
  (:objects b1 b2 b3 b4 b5)
  (:init
    (arm-empty)
    (on b1 b5)
    (on b2 b1)
    (on b3 b2)
    (on-table b4)
    (on b5 b4)
    (clear b3)
  )
  (:goal (and
    (on b1 b2)
    (on b2 b5)
  ))
)
