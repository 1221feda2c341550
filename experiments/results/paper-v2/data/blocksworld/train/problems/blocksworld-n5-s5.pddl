; domains.blocksworld.generator: blocks=5, seed=5, split=train
(define (problem blocksworld-n5-s5-train)
  (:domain blocksworld-4ops)
  (:objects b1 b2 b3 b4 b5)
  (:init
    (arm-empty)
    (on b1 b4)
    (on-table b2)
    (on b3 b1)
    (on b4 b5)
    (on b5 b2)
    (clear b3)
  )
  (:goal (and
    (on b3 b5)
    (on b5 b2)
  ))
)
